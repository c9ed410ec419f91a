// One measured run of a model configuration: build, (load), time, verify, (dump). Used by `qrnn run`
// and by sweeps. Dispatches on cfg.model through the model registry (plugins/model.h; RunOptions there).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "plugins/model.h"
#include "runtime/timing.h"

namespace qrnn {

struct RunReport {
    ModelConfig config;
    Timing timing;
    double gflops = 0;              // GFLOP/s at the median time
    std::optional<Comparison> error;  // set when verified: h and every c_T against the double reference
};

// Throws qrnn::Unavailable "model 'NAME' unavailable: <why>" for a model that cannot run here (e.g. why =
// "no CUDA device"), qrnn::Error for a bad config.
RunReport run_experiment(const ModelConfig &cfg, const RunOptions &opts);

// Side by side: every config built first, then each warm-up and timed repeat runs every model once in
// turn, so the load of a shared machine falls on all alike. One report per config, in order; throws as
// run_experiment does.
std::vector<RunReport> run_experiments_interleaved(const std::vector<ModelConfig> &configs, const RunOptions &opts);

}  // namespace qrnn
