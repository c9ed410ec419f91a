// `qrnn report` for the synthetic sequence tasks: the held-out accuracy curves of `qrnn train --task reverse |
// sort | classify` results files (lm/seq_results.h) side by side, and each file's attention heatmap as text.
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace qrnn::cli {

void print_seq_results(const std::vector<std::string> &paths, std::ostream &os);

}  // namespace qrnn::cli
