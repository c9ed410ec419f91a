// Autotuning of one layer shape: candidate configurations (schedule + knobs) from the schedules' knob
// choices, each compiled, warmed up, timed (median of repeats), verified against the double reference and
// appended to the tuning database (schedules/tuning_db.h).
#pragma once
#include <Halide.h>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "runtime/config.h"
#include "schedules/tuning_db.h"

namespace qrnn {

struct Candidate {
    std::string schedule;
    Knobs knobs;  // complete (defaults merged)
    std::string key() const;
};

// Each schedule's defaults for the target first (in the given order), then random draws over the knob choices,
// never repeating a configuration; empty when the search space is exhausted. The same seed gives the same order.
class CandidateGenerator {
public:
    CandidateGenerator(std::vector<std::string> schedules, uint32_t seed,
                       const Halide::Target &target = Halide::get_jit_target_from_environment());
    std::optional<Candidate> next();

private:
    std::vector<std::string> schedules_;
    size_t defaults_given_ = 0;
    std::mt19937 rng_;
    std::set<std::string> seen_;
    Halide::Target target_;
};

class TrialRunner {
public:
    // cfg: one layer (pooling, shape, seed); target: "" for the JIT host.
    TrialRunner(const ModelConfig &cfg, const std::string &target, int warmup, int repeats, double tolerance);
    // Never throws for a failing candidate: status "failed". Compiled pipelines are reused across runners of the
    // same target (the layer cache: shape-generic schedules compile once for every shape). A candidate whose first
    // timed run exceeds prune_ms is not timed further: status "pruned", median_ms that one run.
    TuningRecord run(const Candidate &candidate, double prune_ms = std::numeric_limits<double>::infinity());
    const std::string &target_name() const { return target_name_; }
    LayerShape shape() const;

private:
    struct Data;
    std::shared_ptr<Data> data_;
    ModelConfig cfg_;
    Halide::Target target_;  // the target every trial compiles for
    std::string target_name_;
    int warmup_, repeats_;
    double tolerance_;
};

// A one-layer configuration of the given pooling and shape (other fields default).
ModelConfig layer_config(const std::string &pooling, const LayerShape &shape);

}  // namespace qrnn
