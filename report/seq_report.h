// `qrnn report` for the synthetic sequence tasks: the held-out accuracy curves of `qrnn train --task reverse |
// sort | classify` results files (tasks/seq_results.h) side by side, and each file's attention heatmap as text.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "sweep/results_file.h"

namespace qrnn::cli {

void print_seq_results(const std::vector<std::string> &paths, std::ostream &os);
// The synthetic-task runs of a sweep results file (train.task reverse | sort | classify; report/seq_sweep_report.cpp):
// every run, each setting's best held-out accuracy over its seeds, the mean accuracy curves; false if none.
bool print_seq_task_sweep(const sweep::ResultTable &t, std::ostream &os);

}  // namespace qrnn::cli
