// Model plugins: a layer type that is built from a ModelConfig, run, verified against its double-precision
// reference and timed through one interface. `qrnn run --model NAME` and run_experiment dispatch here.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nn/layer.h"
#include "runtime/compare.h"
#include "runtime/config.h"
#include "runtime/memory_guard.h"
#include "schedules/schedule.h"

namespace qrnn {
namespace nn {
class LayerStack;
}

// How a model is built and run (qrnn run options; sweeps set the same).
struct RunOptions {
    int warmup = 1;
    int repeats = 5;
    bool verify = false;
    std::string load_path;  // HDF5 dump to take inputs and parameters from (else seeded init)
    std::string dump_path;  // HDF5 file to write inputs, parameters and outputs to
    Knobs knobs;            // schedule knob overrides
    int64_t max_memory = 0; // refuse a run estimated above this many bytes (0: 80% of RAM; memory_guard.h)
};

// One model built for one configuration, its inputs and parameters prepared (seeded), ready to be timed.
class Model {
public:
    virtual ~Model() = default;
    virtual void forward() = 0;         // the timed part: one forward pass over the prepared input
    virtual Comparison verify() = 0;    // one more forward, outputs compared with the double reference
    virtual double flops() const = 0;   // multiply/adds of one forward, for GFLOP/s
    virtual void dump(const std::string &path);  // HDF5 dump of inputs/params/outputs; default: an error
};

// What one forward without a tape (plugins/layer_stack_model.h) saw and produced, and the check of it against the
// model's double reference.
struct InferenceRun {
    const ModelConfig &cfg;
    nn::LayerStack &stack;  // its layers hold the parameters
    const Tensor<float> &x, &y;
    const std::vector<nn::State> &initial, &final;
};
using InferenceVerifier = std::function<Comparison(const InferenceRun &)>;

// One recorded training step (plugins/training_model.h) and the check of it against the model's double
// reference.
struct TrainingStep;
using TrainingVerifier = std::function<Comparison(const TrainingStep &)>;

// Everything about a model, registered in one place (register_model).
struct ModelPlugin {
    std::string name;
    std::string description;
    // `qrnn run` options the model uses besides the shape options batch, seq, input, hidden (shown by
    // `qrnn plugins`; the others are ignored with a note).
    std::vector<std::string> options;
    std::vector<std::string> targets;  // e.g. {"cpu"}, {"cuda"}
    // Empty when the model can run here, else why not (e.g. "no CUDA device"); unset means always available.
    std::function<std::string()> unavailable;
    // Model-specific checks of a config whose generic sizes are valid; throws qrnn::Error. May be unset.
    std::function<void(const ModelConfig &)> validate;
    // `qrnn run` (pass inference); unset for a layer-stack model: LayerStackModel with inference_verifier.
    std::function<std::unique_ptr<Model>(const ModelConfig &, const RunOptions &)> build;
    InferenceVerifier inference_verifier;  // `qrnn run --verify` of the LayerStackModel
    // Architecture features shown by `qrnn plugins` (e.g. "dense", "bidirectional", "variable-length").
    std::vector<std::string> features;
    // `--pass training` for a model that is not a stack of nn::Layers (e.g. encdec); unset: the layer stack's.
    std::function<std::unique_ptr<Model>(const ModelConfig &, const RunOptions &)> build_training;
    // How its memory differs from the plain QRNN stack's, for the memory guard; unset: the plain stack.
    std::function<MemoryShape(const ModelConfig &)> memory;
    // Training (`qrnn train`, `--pass training`): its trainable layers, one per layer of the stack, or its whole
    // stack at once (e.g. qrnn-dense); unset: the model does not train as a layer stack.
    nn::LayerFactory layer;
    nn::StackFactory stack;
    // `--pass training --verify`: a training step's output and gradients against the double reference.
    TrainingVerifier verifier;
    // As `unavailable`, for one configuration (e.g. a precision the library has no real kernel for here); may be unset.
    std::function<std::string(const ModelConfig &)> unavailable_for;
    // --verify's default tolerance in bf16: kBf16Tolerance where the model's reference rounds what it rounds; a library
    // that rounds values of its own is held to the plain reference within kBf16UnroundedTolerance (runtime/compare.h).
    double bf16_tolerance = kBf16Tolerance;
};

// Rejects duplicates and plugins that can build nothing; hands the layer or stack factory to nn/ (nn::make_layers)
// and the verifier to the training runner.
void register_model(ModelPlugin plugin);
const ModelPlugin &find_model(const std::string &name);  // throws qrnn::Error listing the known ones
std::vector<std::string> model_names();
std::string model_unavailable(const ModelPlugin &plugin);  // "" when available
std::string model_unavailable(const ModelPlugin &plugin, const ModelConfig &cfg);  // the plugin's, then cfg's
// The tolerance --verify (qrnn run, a sweep's verify) applies to a configuration when none is given: the precision's
// (default_tolerance), in bf16 the model's own (ModelPlugin::bf16_tolerance).
double verify_tolerance(const ModelConfig &cfg);
// Throws qrnn::Unavailable "model 'NAME' unavailable: <why>" unless model_unavailable(plugin, cfg) is "". register_model
// puts it before a model's layer factory, so a layer of what cannot run here is never built.
void require_model_available(const ModelPlugin &plugin, const ModelConfig &cfg);
// `--pass training` runs: a stack of trainable layers (nn/layer.h factories) or the plugin's build_training.
bool model_trains(const ModelPlugin &plugin);
std::vector<std::string> training_model_names();  // the models for which model_trains holds

// cfg.validate() (sizes, probabilities, pass), then the model's own checks: an unknown model names the known
// ones. Throws qrnn::Error.
void validate_model_config(const ModelConfig &cfg);
// Throws qrnn::Error unless the model has cfg.precision: bf16 needs the option "precision" (inference), with
// cfg.training_pass() also "precision-training"; int8 (inference only) the option "int8".
void check_model_precision(const ModelConfig &cfg);

// check_run_memory with the model's MemoryShape: throws qrnn::Error "... needs about X, above the memory limit".
void check_model_memory(const ModelConfig &cfg, const RunOptions &opts);

// Rejects --mode train for models without zoneout/dropout (the LSTM and CNN baselines).
void require_eval(const ModelConfig &cfg);

}  // namespace qrnn
