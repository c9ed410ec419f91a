// Autotuning of one layer shape: candidate configurations (schedule + knobs) from the schedules' knob
// choices, each compiled, warmed up, timed (median of repeats), verified against the double reference and
// appended to the tuning database (runtime/tuning_db.h).
#pragma once
#include <Halide.h>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "runtime/config.h"
#include "runtime/tuning_db.h"

namespace qrnn {

struct Candidate {
    std::string schedule;
    Knobs knobs;  // complete (defaults merged)
    std::string key() const;
};

// Each schedule's defaults first (in the given order), then random draws over the knob choices, never
// repeating a configuration; empty when the search space is exhausted.
class CandidateGenerator {
public:
    CandidateGenerator(std::vector<std::string> schedules, uint32_t seed);
    std::optional<Candidate> next();

private:
    std::vector<std::string> schedules_;
    size_t defaults_given_ = 0;
    std::mt19937 rng_;
    std::set<std::string> seen_;
};

class TrialRunner {
public:
    // cfg: one layer (pooling, shape, seed); target: "" for the JIT host.
    TrialRunner(const ModelConfig &cfg, const std::string &target, int warmup, int repeats, double tolerance);
    TuningRecord run(const Candidate &candidate);  // never throws for a failing candidate: status "failed"
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
