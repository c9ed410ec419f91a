// One measured run of a model configuration: build, (load), time, verify, (dump). Used by `qrnn run`
// and by sweeps. Dispatches on cfg.model through the model registry (plugins/model.h).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "runtime/compare.h"
#include "runtime/config.h"
#include "runtime/timing.h"
#include "schedules/schedule.h"

namespace qrnn {

struct RunOptions {
    int warmup = 1;
    int repeats = 5;
    bool verify = false;
    std::string load_path;  // HDF5 dump to take inputs and parameters from (else seeded init)
    std::string dump_path;  // HDF5 file to write inputs, parameters and outputs to
    Knobs knobs;            // schedule knob overrides
    int64_t max_memory = 0; // refuse a run estimated above this many bytes (0: 80% of RAM; memory_guard.h)
};

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
