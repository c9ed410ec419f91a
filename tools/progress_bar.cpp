#include "tools/progress_bar.h"

#include <algorithm>
#include <iostream>

namespace qrnn::cli {

std::string seconds_text(double s) {
    int v = static_cast<int>(s + 0.5);
    return v >= 60 ? std::to_string(v / 60) + "m" + std::to_string(v % 60) + "s" : std::to_string(v) + "s";
}

void draw_progress(const std::string &prefix, double fraction, int done, int total, double elapsed, double eta,
                   const std::string &suffix) {
    const int width = 24;
    const int filled = static_cast<int>(std::clamp(fraction, 0.0, 1.0) * width);
    std::cerr << "\r" << prefix << "[" << std::string(filled, '#') << std::string(width - filled, '.') << "] " << done << " trials"
              << (total > 0 ? "/" + std::to_string(total) : "") << "  elapsed " << seconds_text(elapsed) << "  ETA "
              << seconds_text(std::max(0.0, eta)) << (suffix.empty() ? "" : "  " + suffix) << "   " << std::flush;
}

}  // namespace qrnn::cli
