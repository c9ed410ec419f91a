// `qrnn report` for language-model training: the perplexity table and learning curves of `qrnn train`
// results files (lm/train_results.h), and of sweeps of training runs (columns best_val_ppl, val_ppl_curve...).
#pragma once
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "lm/step_timing.h"
#include "sweep/results_file.h"

namespace qrnn::cli {

// An attribute as text ("-" when missing or NaN); the value of `key: value` in a config text ("-" if absent).
std::string attr_text(const std::map<std::string, lm::Attr> &attrs, const std::string &name);
std::string config_value(const std::string &config, const std::string &key);

// One row per epoch, side by side: per run "NAME train" (unless `train` is empty) and "NAME valid" perplexity.
void print_curves(const std::vector<std::string> &names, const std::vector<std::vector<double>> &train,
                  const std::vector<std::vector<double>> &valid, std::ostream &os, const std::string &title,
                  int decimals = 1);
std::vector<double> parse_curve(const std::string &text);  // "1.5,2" -> {1.5, 2}

void print_training_results(const std::vector<std::string> &paths, std::ostream &os);
// The training runs of a sweep results file (report/lm_sweep_report.cpp): every run (with its seed, best epoch and
// time), each setting's mean and spread over its seeds (runs that differ only in `seed`), the mean learning curves
// per setting and every run's validation curve; false when the file has no training runs.
bool print_training_sweep(const sweep::ResultTable &t, std::ostream &os);

// Step timings of `qrnn train-speed` (lm/step_timing.h; report/lm_speed_report.cpp): the per-batch breakdown
// (medians), stacked text bars beside the paper's Fig. 4 left (read from paper_csv; "" or a missing file: no
// paper columns), the ratios to the QRNN, ours and the paper's, and the speed targets.
void print_step_timings(const lm::StepTimings &t, const std::string &path, const std::string &paper_csv, std::ostream &os);
// Several files (e.g. `qrnn train-speed`'s and experiments/anchors/pytorch_lm.py's) in one table: the first file's
// header, a line per further file (a separate run; its configuration checked against the first's), every model (a
// name already taken gets "#<file number>"), ratios to the QRNN of the same file when it has one (paired, same
// rounds), else to the first QRNN (medians of separate runs, said so), and the targets against the torch LMs.
void print_step_timings(const std::vector<std::pair<std::string, lm::StepTimings>> &files, const std::string &paper_csv,
                        std::ostream &os);

}  // namespace qrnn::cli
