// `qrnn report` for language-model training: the perplexity table and learning curves of `qrnn train`
// results files (lm/train_results.h), and of sweeps of training runs (columns best_val_ppl, val_ppl_curve...).
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "sweep/results_file.h"

namespace qrnn::cli {

void print_training_results(const std::vector<std::string> &paths, std::ostream &os);
// The training runs of a sweep results file; false when it has none.
bool print_training_sweep(const sweep::ResultTable &t, std::ostream &os);

}  // namespace qrnn::cli
