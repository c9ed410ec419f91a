// `qrnn report` of a sweep of training runs: every run, then each setting (the runs that differ only in `seed`)
// with the mean and spread of its best validation perplexity, and the learning curves.
#include <algorithm>
#include <cmath>

#include "report/lm_report.h"
#include "tools/sweep_settings.h"
#include "report/table.h"

namespace qrnn::cli {
namespace {

std::string ratio(double v) { return std::isnan(v) ? std::string("-") : fixed(v, 2) + "x"; }

// 1-based epoch of the curve's (first) minimum: the best validation epoch.
size_t best_epoch(const std::vector<double> &valid) {
    return static_cast<size_t>(std::min_element(valid.begin(), valid.end()) - valid.begin()) + 1;
}

// The best validation perplexity a run reached by `budget` seconds of training (its epochs that ended by then);
// NaN when no epoch had, or the row predates the seconds curve.
double best_within(const sweep::ResultTable &r, size_t i, double budget) {
    if (!r.find("seconds_curve") || r.str(i, "seconds_curve").empty()) return NAN;
    const std::vector<double> valid = parse_curve(r.str(i, "val_ppl_curve")), seconds = parse_curve(r.str(i, "seconds_curve"));
    double best = NAN;
    for (size_t e = 0; e < std::min(valid.size(), seconds.size()); e++)
        if (seconds[e] <= budget && !(valid[e] >= best)) best = valid[e];
    return best;
}

// Equal wall-clock: the shortest mean training time over the settings, within which every setting is compared.
double equal_time_budget(const sweep::ResultTable &r, const std::vector<Setting> &settings) {
    double budget = INFINITY;
    for (auto &s : settings) {
        std::vector<double> seconds;
        for (size_t i : s.rows) seconds.push_back(r.num(i, "train_seconds"));
        budget = std::min(budget, mean(seconds));
    }
    return budget;
}

void print_lm_settings(const sweep::ResultTable &r, const std::vector<Setting> &settings, std::ostream &os) {
    const double budget = equal_time_budget(r, settings);
    Table t({"setting", "model", "runs", "seeds", "mean_best_val_ppl", "sd", "min", "max", "vs_unigram", "mean_seconds",
             "ppl_at_equal_time"});
    for (auto &s : settings) {
        std::vector<double> best, seconds, within;
        double unigram = 0;
        for (size_t i : s.rows) {
            best.push_back(r.num(i, "best_val_ppl")), seconds.push_back(r.num(i, "train_seconds"));
            within.push_back(best_within(r, i, budget));
            unigram = r.num(i, "unigram_val_ppl");
        }
        const double m = mean(best);
        t.add({setting_label(s, settings), s.keys.at("model"), std::to_string(s.rows.size()), seeds_of(s, r), fixed(m, 2),
               num(sample_sd(best), 2), fixed(*std::min_element(best.begin(), best.end()), 2), fixed(*std::max_element(best.begin(), best.end()), 2),
               ratio(unigram / m), num(mean(seconds), 0), num(mean(within), 2)});
    }
    os << "\nper setting (runs that differ only in seed): best validation perplexity, mean and sample sd over the seeds; "
          "vs_unigram: unigram / mean; ppl_at_equal_time: the mean over the seeds of the best validation perplexity "
          "reached within "
       << num(budget, 0) << " s of training (the shortest setting's mean_seconds: equal wall-clock):\n";
    t.print(os);
}

}  // namespace

bool print_training_sweep(const sweep::ResultTable &r, std::ostream &os) {
    if (!r.find("best_val_ppl")) return false;
    bool any = false;
    for (size_t i = 0; i < r.rows(); i++) any |= training_task(r, i) == "lm" && !r.str(i, "train").empty();
    if (!any) return false;
    Table t({"run", "model", "L x m", "window", "zoneout", "dropout", "seed", "status", "best_val_ppl", "best_epoch", "epochs",
             "unigram_ppl", "vs_unigram", "test_ppl", "seconds", "tok/s", "rnn_ms", "softmax_ms", "optim_ms"});
    std::vector<Setting> settings;
    std::vector<std::vector<double>> train(r.rows()), valid(r.rows());
    for (size_t i = 0; i < r.rows(); i++) {
        if (training_task(r, i) != "lm") continue;  // a synthetic task (report/seq_sweep_report.cpp)
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
        if (trained) add_to_setting(settings, r, i);
    }
    os << "\ntraining runs (validation perplexity; best_epoch: its epoch; test_ppl with the best validation epoch's "
          "parameters; seconds: training time of all epochs, validation excluded; per-batch ms of the last epoch):\n";
    t.print(os);
    if (settings.empty()) return true;
    print_lm_settings(r, settings, os);
    std::vector<std::string> names;
    std::vector<std::vector<double>> mean_train, mean_valid;
    bool replicated = false;
    for (auto &s : settings) {
        names.push_back(setting_name(s, settings));
        mean_train.push_back(setting_mean_curve(s, train)), mean_valid.push_back(setting_mean_curve(s, valid));
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
