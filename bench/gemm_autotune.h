// `qrnn autotune --gemm`: the GEMM core's knobs for this CPU and a target (schedules/gemm_tuning.h). Each trial
// compiles the layer's conv GEMM and the backward's dW and dX at the given shapes under one set of knobs, checks them
// against the best sgemm on the same problems, and times each side by side with it; its score is the geometric mean
// of those speed ratios. The search: the defaults; the three ops' register tiles (each op's candidates in the same
// trials: an op's time depends on its own tile only); the best tile of each op together; then the two block sizes
// around the best. Every trial is appended to the tuning database as a "gemm-core" record as it is measured.
#pragma once
#include <Halide.h>

#include <atomic>
#include <string>
#include <vector>

#include "schedules/schedule.h"

namespace qrnn::cli {

struct GemmAutotuneOptions {
    Halide::Target target;
    std::string db;
    std::vector<LayerShape> shapes;
    const PoolingVariant *pooling = nullptr;  // the --pooling option's
    int warmup = 1, repeats = 5;
    int trials = 0;        // 0: no limit
    double seconds = 300;  // 0: no limit; a trial under way is finished
};

// Runs the search, prints its table and the chosen knobs; returns the exit code.
int gemm_autotune(const GemmAutotuneOptions &options, const std::atomic<bool> &interrupted);

}  // namespace qrnn::cli
