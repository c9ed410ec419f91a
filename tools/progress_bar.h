// A progress line on stderr, redrawn in place (\r) by the searches of `qrnn autotune`.
#pragma once
#include <string>

namespace qrnn::cli {

std::string seconds_text(double s);  // "42s", "3m5s"
// "prefix[#####...] done/total trials  elapsed 1m2s  ETA 30s  suffix" (total 0: "done trials").
void draw_progress(const std::string &prefix, double fraction, int done, int total, double elapsed, double eta,
                   const std::string &suffix);

}  // namespace qrnn::cli
