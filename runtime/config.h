// What to build and run: a model spec and the settings of one run, validated before anything is compiled.
#pragma once
#include <cstdint>
#include <string>

namespace qrnn {

struct PoolingVariant;

// What a model is (sweep and train keys of the model; the LM and task configs hold one): its kind, widths, depth,
// regularisation rates, seed, and the schedule and target its layers compile for.
struct ModelSpec {
    std::string model = "qrnn";
    std::string pooling = "fo";
    std::string schedule = "tuned";
    std::string target;         // Halide target, e.g. host-cuda; empty: the JIT target of the environment
    std::string precision = "f32";  // of the conv's operands: f32 or bf16 (core/precision.h)
    int64_t window = 2, input = 320, hidden = 320, layers = 1;
    double zoneout = 0.0;       // probability that a step keeps its previous state (F forced to 1)
    double dropout = 0.0;       // dropout on the input of layers >= 1
    uint32_t seed = 1;

    // The variant `pooling` names (core/pooling.h); throws qrnn::Error naming the known ones. Code below the
    // config reads this, never the name.
    const PoolingVariant &pooling_variant() const;
    int64_t layer_input(int64_t layer) const { return layer == 0 ? input : hidden; }
    int64_t history_rows() const { return window - 1; }
};

// How one run uses a model: the batch and sequence shape, whether masks are on, what is timed.
struct RunSettings {
    int64_t batch = 16, seq = 128;
    // Masks on: zoneout and dropout apply (`--mode train`, sweep key `mode: train`; `eval`: off). Not the same
    // as training (pass = "training" times forward + backward, with or without masks).
    bool stochastic = false;
    // Which draw of the masks (not a config key): 0 for the masks of absolute time (the LM carries its state and
    // time from batch to batch); the synthetic tasks, whose every batch starts at time 0, set the training step.
    uint64_t mask_draw = 0;
    std::string pass = "inference";  // what is timed: "inference" (forward) or "training" (forward with tape + backward)

    bool training_pass() const { return pass == "training"; }
};

// One model configuration for one run: what layers and stacks are built from.
struct ModelConfig : ModelSpec, RunSettings {
    ModelConfig() = default;
    ModelConfig(const ModelSpec &spec, const RunSettings &run) : ModelSpec(spec), RunSettings(run) {}

    // The model-independent checks (sizes, probabilities, pass); throws qrnn::Error naming the bad option and
    // value. validate_model_config (plugins/model.h) adds the model's own checks.
    void validate() const;
    std::string describe() const;
};

}  // namespace qrnn
