// `qrnn report` of a sweep of training runs: every run, then each setting (the runs that differ only in `seed`)
// with the mean and spread of its best validation perplexity, and the learning curves.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "tools/lm_report.h"
#include "tools/table.h"

namespace qrnn::cli {
namespace {

using Settings = std::map<std::string, std::string>;

// A run's settings: every run field but the seed, and each train.* key (column `train`: "key=value,...").
Settings settings_of(const sweep::ResultTable &r, size_t i) {
    Settings s;
    for (auto &f : sweep::run_fields())
        if (f.name != "seed") s[f.name] = r.str(i, f.name);
    const std::string train = r.str(i, "train");
    for (size_t at = 0; at < train.size();) {
        const size_t comma = std::min(train.find(',', at), train.size()), eq = train.find('=', at);
        if (eq < comma) s[sweep::kTrainPrefix + train.substr(at, eq - at)] = train.substr(eq + 1, comma - eq - 1);
        at = comma + 1;
    }
    return s;
}

struct Setting {
    Settings keys;
    std::vector<size_t> rows;  // runs, in file order
};

// "zoneout=0.1 window=3": the keys (but model) whose values differ between the settings; "-" if none does.
std::string label(const Setting &s, const std::vector<Setting> &all) {
    std::string text;
    for (auto &[key, value] : s.keys) {
        if (key == "model") continue;
        const bool varies = std::any_of(all.begin(), all.end(), [&](const Setting &o) { return o.keys.at(key) != value; });
        if (varies) text += (text.empty() ? "" : " ") + key + "=" + value;
    }
    return text.empty() ? "-" : text;
}

double mean(const std::vector<double> &v) { return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()); }

// Sample standard deviation; NaN for one value.
double stdev(const std::vector<double> &v) {
    if (v.size() < 2) return std::nan("");
    const double m = mean(v);
    double sum = 0;
    for (double x : v) sum += (x - m) * (x - m);
    return std::sqrt(sum / static_cast<double>(v.size() - 1));
}

std::string num(double v, int decimals) { return std::isnan(v) ? std::string("-") : fixed(v, decimals); }
std::string ratio(double v) { return std::isnan(v) ? std::string("-") : fixed(v, 2) + "x"; }

// 1-based epoch of the curve's (first) minimum: the best validation epoch.
size_t best_epoch(const std::vector<double> &valid) {
    return static_cast<size_t>(std::min_element(valid.begin(), valid.end()) - valid.begin()) + 1;
}

// Per epoch, the mean over the curves that reach it.
std::vector<double> mean_curve(const std::vector<std::vector<double>> &curves) {
    std::vector<double> sum, count;
    for (auto &c : curves) {
        sum.resize(std::max(sum.size(), c.size())), count.resize(sum.size());
        for (size_t e = 0; e < c.size(); e++) sum[e] += c[e], count[e]++;
    }
    for (size_t e = 0; e < sum.size(); e++) sum[e] /= count[e];
    return sum;
}

void print_settings(const sweep::ResultTable &r, const std::vector<Setting> &settings, std::ostream &os) {
    Table t({"setting", "model", "runs", "seeds", "mean_best_val_ppl", "sd", "min", "max", "vs_unigram", "mean_seconds"});
    for (auto &s : settings) {
        std::vector<double> best, seconds;
        std::string seeds;
        double unigram = 0;
        for (size_t i : s.rows) {
            best.push_back(r.num(i, "best_val_ppl")), seconds.push_back(r.num(i, "train_seconds"));
            seeds += (seeds.empty() ? "" : ",") + r.str(i, "seed");
            unigram = r.num(i, "unigram_val_ppl");
        }
        const double m = mean(best);
        t.add({label(s, settings), s.keys.at("model"), std::to_string(s.rows.size()), seeds, fixed(m, 2), num(stdev(best), 2),
               fixed(*std::min_element(best.begin(), best.end()), 2), fixed(*std::max_element(best.begin(), best.end()), 2),
               ratio(unigram / m), num(mean(seconds), 0)});
    }
    os << "\nper setting (runs that differ only in seed): best validation perplexity, mean and sample sd over the seeds; "
          "vs_unigram: unigram / mean:\n";
    t.print(os);
}

}  // namespace

bool print_training_sweep(const sweep::ResultTable &r, std::ostream &os) {
    if (!r.find("best_val_ppl")) return false;
    Table t({"run", "model", "L x m", "window", "zoneout", "dropout", "seed", "status", "best_val_ppl", "best_epoch", "epochs",
             "unigram_ppl", "vs_unigram", "test_ppl", "seconds", "tok/s", "rnn_ms", "softmax_ms", "optim_ms"});
    std::vector<Setting> settings;
    std::vector<std::vector<double>> train(r.rows()), valid(r.rows());
    for (size_t i = 0; i < r.rows(); i++) {
        const bool trained = !r.str(i, "val_ppl_curve").empty();
        if (!trained && r.str(i, "status") == "ok") continue;  // a timing run
        const double best = r.num(i, "best_val_ppl"), uni = r.num(i, "unigram_val_ppl");
        if (trained) train[i] = parse_curve(r.str(i, "train_ppl_curve")), valid[i] = parse_curve(r.str(i, "val_ppl_curve"));
        t.add({r.str(i, "index"), r.str(i, "model"), r.str(i, "layers") + " x " + r.str(i, "hidden"), r.str(i, "window"),
               r.str(i, "zoneout"), r.str(i, "dropout"), r.str(i, "seed"), r.str(i, "status"), num(best, 2),
               trained ? std::to_string(best_epoch(valid[i])) : "-", trained ? std::to_string(valid[i].size()) : "-",
               num(uni, 1), ratio(uni / best), num(r.num(i, "test_ppl"), 2), num(r.num(i, "train_seconds"), 0),
               num(r.num(i, "tokens_per_s"), 0), num(r.num(i, "rnn_ms"), 1), num(r.num(i, "softmax_ms"), 1),
               num(r.num(i, "optim_ms"), 1)});
        if (!trained) continue;
        const Settings keys = settings_of(r, i);
        auto same = std::find_if(settings.begin(), settings.end(), [&](const Setting &s) { return s.keys == keys; });
        if (same == settings.end()) settings.push_back({keys, {i}});
        else same->rows.push_back(i);
    }
    os << "\ntraining runs (validation perplexity; best_epoch: its epoch; test_ppl with the best validation epoch's "
          "parameters; seconds: training time of all epochs, validation excluded; per-batch ms of the last epoch):\n";
    t.print(os);
    if (settings.empty()) return true;
    print_settings(r, settings, os);
    std::vector<std::string> names;
    std::vector<std::vector<double>> mean_train, mean_valid;
    bool replicated = false;
    for (auto &s : settings) {
        std::vector<std::vector<double>> tr, va;
        for (size_t i : s.rows) tr.push_back(train[i]), va.push_back(valid[i]);
        names.push_back(s.keys.at("model") + " " + label(s, settings));
        mean_train.push_back(mean_curve(tr)), mean_valid.push_back(mean_curve(va));
        replicated |= s.rows.size() > 1;
    }
    print_curves(names, mean_train, mean_valid, os,
                 replicated ? "learning curves (perplexity per epoch, mean over each setting's seeds)"
                            : "learning curves (perplexity per epoch)");
    if (!replicated) return true;
    names.clear(), mean_valid.clear();
    for (auto &s : settings)
        for (size_t i : s.rows) names.push_back("run " + r.str(i, "index")), mean_valid.push_back(valid[i]);
    print_curves(names, {}, mean_valid, os, "validation perplexity per epoch of every run (runs as in the first table)");
    return true;
}

}  // namespace qrnn::cli
