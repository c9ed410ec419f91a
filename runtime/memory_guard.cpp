#include "runtime/memory_guard.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.h"

namespace qrnn {

double estimated_run_bytes(const ModelConfig &cfg, bool verify, const MemoryShape &shape) {
    const double G = 4, T = cfg.seq, B = cfg.batch, m = cfg.hidden, k = cfg.window, L = cfg.layers, D = shape.directions;
    // A training step also keeps the tape (gates), their gradients, dh and dx, and every parameter's gradient
    // (plus the backward's scratch of the same size: nn::Layer adds it into the gradient).
    auto training_floats = [&](double n) {
        return D * (2 * G * T * B * m + T * B * m + 2 * (G * k * n * m + G * m) + B * m) + T * B * n + (k - 1) * B * n;
    };
    auto layer_floats = [&](double n) {
        return shape.weight_copies * D * (G * k * n * m + G * m)  // weights, bias
               + D * B * m + (k - 1) * B * n  // c0 (each direction's), history
               + (T + k - 1) * B * n          // padded input
               + D * 2 * G * T * B * m        // conv and activated gates
               + D * (T * B * m + B * m)      // h, c_T
               + (cfg.training_pass() ? training_floats(n) : 0);
    };
    // layer_floats is linear in n: over the L layers it is L * layer_floats(0) + (its slope) * (sum of the widths).
    const double later = shape.later_input < 0 ? m : shape.later_input;
    const double widths = cfg.input + (L - 1) * later + shape.input_growth * L * (L - 1) / 2;
    const double stack = L * layer_floats(0) + (layer_floats(1) - layer_floats(0)) * widths;
    const double floats = T * B * cfg.input + shape.stacks * stack + shape.extra_floats;
    return floats * sizeof(float) * (verify ? 3 : 1);  // the reference holds the same in double
}

int64_t default_memory_limit() {
    const double ram = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
    return static_cast<int64_t>(std::max(0.8 * ram, double(1LL << 30)));
}

int64_t parse_memory_size(const std::string &option, const std::string &text) {
    size_t used = 0;
    double v = -1;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception &) {
        used = 0;
    }
    const std::string suffix = text.substr(std::min(used, text.size()));
    double scale = suffix.empty() ? 1 : 0;
    for (auto [unit, bytes] : {std::pair{"K", 1024.0}, {"M", 1024.0 * 1024}, {"G", 1024.0 * 1024 * 1024}, {"T", 1024.0 * 1024 * 1024 * 1024}})
        if (suffix == unit || suffix == std::string(unit) + "B" || suffix == std::string(unit) + "iB") scale = bytes;
    if (used == 0 || scale == 0 || !std::isfinite(v) || v <= 0 || v * scale > 9e18)
        fail("--", option, ": '", text, "' is not a memory size (e.g. 8G, 512M, or bytes)");
    return static_cast<int64_t>(v * scale);
}

std::string format_bytes(double bytes) {
    char buf[64];
    if (bytes >= 1024.0 * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.3g GiB", bytes / (1024.0 * 1024 * 1024));
    else std::snprintf(buf, sizeof buf, "%.3g MiB", bytes / (1024.0 * 1024));
    return buf;
}

void check_run_memory(const ModelConfig &cfg, bool verify, int64_t limit_bytes, const MemoryShape &shape) {
    const int64_t limit = limit_bytes > 0 ? limit_bytes : default_memory_limit();
    const double need = estimated_run_bytes(cfg, verify, shape);
    if (need > static_cast<double>(limit))
        fail(cfg.describe(), ": needs about ", format_bytes(need), ", above the memory limit ", format_bytes(limit),
             " (--max-memory; default 80% of RAM)");
}

}  // namespace qrnn
