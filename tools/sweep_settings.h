// Grouping the training runs of a sweep results file into settings (runs that differ only in `seed`), and the
// statistics the training reports print per setting (report/lm_sweep_report.cpp, report/seq_sweep_report.cpp).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "sweep/results_file.h"

namespace qrnn::cli {

using Settings = std::map<std::string, std::string>;

struct Setting {
    Settings keys;             // every run field but the seed, and each train.* key as "train.KEY"
    std::vector<size_t> rows;  // runs, in file order
};

Settings settings_of(const sweep::ResultTable &r, size_t i);
std::string training_task(const sweep::ResultTable &r, size_t i);  // the run's train.task; "lm" without one
void add_to_setting(std::vector<Setting> &settings, const sweep::ResultTable &r, size_t i);
// "zoneout=0.1 window=3": the keys (but model) whose values differ between the settings; "-" if none does.
std::string setting_label(const Setting &s, const std::vector<Setting> &all);
std::string seeds_of(const Setting &s, const sweep::ResultTable &r);  // "1,2,3"
std::string setting_name(const Setting &s, const std::vector<Setting> &all);  // "MODEL LABEL", for curve columns
// Per epoch, the mean of the setting's runs' curves (curves: one per row of the file, indexed by row).
std::vector<double> setting_mean_curve(const Setting &s, const std::vector<std::vector<double>> &curves);

double mean(const std::vector<double> &v);
double sample_sd(const std::vector<double> &v);  // NaN for one value
std::vector<double> mean_curve(const std::vector<std::vector<double>> &curves);  // per epoch, over the curves reaching it
std::string num(double v, int decimals);          // "-" for NaN

}  // namespace qrnn::cli
