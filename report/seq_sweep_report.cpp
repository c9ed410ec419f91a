// `qrnn report` of a sweep of synthetic-task training runs (train.task reverse | sort | classify): every run,
// each setting's mean and spread of its best held-out accuracy over the seeds, and the mean accuracy curves.
#include <algorithm>

#include "report/lm_report.h"
#include "report/seq_report.h"
#include "tools/sweep_settings.h"
#include "report/table.h"

namespace qrnn::cli {
namespace {

void print_seq_settings(const sweep::ResultTable &r, const std::vector<Setting> &settings, std::ostream &os) {
    Table t({"setting", "task", "model", "attention", "runs", "seeds", "mean_best", "sd", "min", "max", "mean_final",
             "mean_steps", "mean_seconds"});
    for (auto &s : settings) {
        std::vector<double> best, final_, steps, seconds;
        for (size_t i : s.rows)
            best.push_back(r.num(i, "best_accuracy")), final_.push_back(r.num(i, "final_accuracy")),
                steps.push_back(r.num(i, "steps")), seconds.push_back(r.num(i, "train_seconds"));
        const size_t first = s.rows.front();
        t.add({setting_label(s, settings), r.str(first, "task"), s.keys.at("model"), r.str(first, "attention"),
               std::to_string(s.rows.size()), seeds_of(s, r), num(mean(best), 4), num(sample_sd(best), 4),
               num(*std::min_element(best.begin(), best.end()), 4), num(*std::max_element(best.begin(), best.end()), 4),
               num(mean(final_), 4), num(mean(steps), 0), num(mean(seconds), 0)});
    }
    os << "\nper setting (runs that differ only in seed): best held-out accuracy (exact match for reverse/sort), mean and "
          "sample sd over the seeds:\n";
    t.print(os);
}

}  // namespace

bool print_seq_task_sweep(const sweep::ResultTable &r, std::ostream &os) {
    Table t({"run", "task", "model", "attention", "L x m", "seed", "status", "best", "final", "chance", "epochs", "steps",
             "seconds", "parameters"});
    std::vector<Setting> settings;
    std::vector<std::vector<double>> accuracy(r.rows());
    size_t runs = 0;
    for (size_t i = 0; i < r.rows(); i++) {
        const std::string task = training_task(r, i);
        if (task == "lm") continue;
        runs++;
        const bool trained = !r.str(i, "accuracy_curve").empty();
        if (trained) accuracy[i] = parse_curve(r.str(i, "accuracy_curve")), add_to_setting(settings, r, i);
        t.add({r.str(i, "index"), task, r.str(i, "model"), trained ? r.str(i, "attention") : "-",
               r.str(i, "layers") + " x " + r.str(i, "hidden"), r.str(i, "seed"), r.str(i, "status"),
               num(r.num(i, "best_accuracy"), 4), num(r.num(i, "final_accuracy"), 4), num(r.num(i, "chance"), 2),
               trained ? r.str(i, "epochs_done") : "-", trained ? r.str(i, "steps") : "-", num(r.num(i, "train_seconds"), 0),
               trained ? r.str(i, "parameters") : "-"});
    }
    if (runs == 0) return false;
    os << "\nsynthetic-task training runs (held-out accuracy: exact match for reverse/sort; seconds: training and "
          "evaluations):\n";
    t.print(os);
    if (settings.empty()) return true;
    print_seq_settings(r, settings, os);
    std::vector<std::string> names;
    std::vector<std::vector<double>> curves;
    for (auto &s : settings) names.push_back(setting_name(s, settings)), curves.push_back(setting_mean_curve(s, accuracy));
    print_curves(names, {}, curves, os, "held-out accuracy per epoch (mean over each setting's seeds)", 4);
    return true;
}

}  // namespace qrnn::cli
