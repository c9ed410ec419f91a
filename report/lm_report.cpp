#include "report/lm_report.h"

#include <algorithm>
#include <cmath>

#include "lm/train_results.h"
#include "report/table.h"

namespace qrnn::cli {

std::string attr_text(const std::map<std::string, lm::Attr> &attrs, const std::string &name) {
    auto it = attrs.find(name);
    if (it == attrs.end()) return "-";
    if (auto s = std::get_if<std::string>(&it->second)) return *s;
    if (auto i = std::get_if<int64_t>(&it->second)) return std::to_string(*i);
    double d = std::get<double>(it->second);
    return std::isnan(d) ? "-" : fixed(d, 2);
}

std::string config_value(const std::string &config, const std::string &key) {
    const std::string lines = "\n" + config;
    const size_t at = lines.find("\n" + key + ": ");
    if (at == std::string::npos) return "-";
    const size_t start = at + key.size() + 2;  // in config: lines has one character more
    return config.substr(start, config.find('\n', start) - start);
}

void print_curves(const std::vector<std::string> &names, const std::vector<std::vector<double>> &train,
                  const std::vector<std::vector<double>> &valid, std::ostream &os, const std::string &title, int decimals) {
    std::vector<std::string> header{"epoch"};
    size_t epochs = 0;
    for (size_t i = 0; i < names.size(); i++) {
        if (!train.empty()) header.push_back(names[i] + " train");
        header.push_back(names[i] + " valid");
        epochs = std::max(epochs, valid[i].size());
    }
    Table t(header);
    for (size_t e = 0; e < epochs; e++) {
        std::vector<std::string> row{std::to_string(e + 1)};
        for (size_t i = 0; i < names.size(); i++) {
            if (!train.empty()) row.push_back(e < train[i].size() ? fixed(train[i][e], decimals) : "");
            row.push_back(e < valid[i].size() ? fixed(valid[i][e], decimals) : "");
        }
        t.add(row);
    }
    os << "\n" << title << ":\n";
    t.print(os);
}

std::vector<double> parse_curve(const std::string &text) {
    std::vector<double> v;
    for (size_t at = 0; at < text.size();) {
        size_t comma = text.find(',', at);
        v.push_back(std::stod(text.substr(at, comma - at)));
        if (comma == std::string::npos) break;
        at = comma + 1;
    }
    return v;
}

void print_training_results(const std::vector<std::string> &paths, std::ostream &os) {
    Table t({"run", "model", "L x m", "zoneout", "epochs", "best_val_ppl", "unigram_ppl", "vs_unigram", "test_ppl", "tok/s",
             "rnn_ms", "softmax_ms", "optim_ms"});
    std::vector<std::string> names;
    std::vector<std::vector<double>> train, valid;
    for (size_t i = 0; i < paths.size(); i++) {
        const lm::TrainResults r = lm::read_train_results(paths[i]);
        const std::string config = attr_text(r.attrs, "config");
        const double best = std::get<double>(r.attrs.at("best_val_ppl")), uni = std::get<double>(r.attrs.at("unigram_val_ppl"));
        const lm::EpochRecord last = r.epochs.empty() ? lm::EpochRecord{} : r.epochs.back();
        names.push_back(std::to_string(i + 1) + ":" + attr_text(r.attrs, "model"));
        t.add({std::to_string(i + 1), attr_text(r.attrs, "model"), config_value(config, "layers") + " x " + config_value(config, "hidden"),
               config_value(config, "zoneout"), std::to_string(r.epochs.size()), fixed(best, 2), fixed(uni, 1),
               fixed(uni / best, 2) + "x", attr_text(r.attrs, "test_ppl"), fixed(last.tokens_per_s, 0), fixed(last.rnn_ms, 1),
               fixed(last.softmax_ms, 1), fixed(last.optim_ms, 1)});
        train.emplace_back(), valid.emplace_back();
        for (auto &e : r.epochs) train.back().push_back(e.train_ppl), valid.back().push_back(e.val_ppl);
        os << i + 1 << ": " << paths[i] << " (" << attr_text(r.attrs, "cpu_model") << ", " << attr_text(r.attrs, "cores") << " cores)\n";
    }
    os << "\nperplexity (validation; test_ppl with the best validation epoch's parameters; tok/s and per-batch ms of the last "
          "epoch: rnn and softmax are forward + backward):\n";
    t.print(os);
    print_curves(names, train, valid, os, "learning curves (perplexity per epoch)");
}

}  // namespace qrnn::cli
