// Trainable layers: one interface for every model's layer (QRNN, LSTM, CNN and what comes later), a forward
// pass that can save what its backward needs (a tape), a hand-written backward, and the parameters with
// their gradients. Model plugins (plugins/) and training (qrnn train) are thin users of this interface.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "runtime/config.h"
#include "runtime/int8_params.h"
#include "runtime/tensor.h"
#include "schedules/schedule.h"

namespace qrnn::nn {

// A parameter and its gradient (same shape); backward accumulates into grad, zero_grads() clears it.
struct Param {
    std::string name;  // e.g. "weights", "bias", "w_input"
    Tensor<float> *value = nullptr;
    Tensor<float> *grad = nullptr;
};

// Recurrent state carried from one call to the next (truncated BPTT): named tensors (QRNN: "history" and "c";
// LSTM: "h" and "c") and the absolute time of the next step (it indexes the zoneout/dropout masks).
struct State {
    std::vector<std::string> names;
    std::vector<Tensor<float>> tensors;
    int64_t time = 0;

    Tensor<float> &at(const std::string &name);  // throws qrnn::Error naming the missing tensor
    const Tensor<float> &at(const std::string &name) const;
};

// The per-layer state tensors `name` ([B][m] each) of a stack's states, stacked into [L][B][m].
Tensor<float> stacked_state(const std::vector<State> &states, const std::string &name);

// What a forward pass saved for its backward (layer-specific contents).
struct Tape {
    virtual ~Tape() = default;
};

class Layer {
public:
    virtual ~Layer() = default;
    virtual std::string kind() const = 0;  // e.g. "qrnn", "lstm-onednn"
    virtual int64_t input_size() const = 0;
    virtual int64_t output_size() const = 0;
    virtual State initial_state(int64_t batch) const = 0;  // zeros
    // Masks (zoneout, dropout) on or off; independent of whether a tape is recorded.
    virtual void set_stochastic(bool on) = 0;
    // Which draw of the masks (ModelConfig::mask_draw: 0, or the training step of a task whose every batch
    // starts at time 0); layers without masks ignore it.
    virtual void set_mask_draw(uint64_t) {}
    // Whether the layer masks its own input (dropout) and state (zoneout); a stack applies the between-layer
    // dropout of layers without (LSTM, CNN) itself (nn::LayerStack).
    virtual bool has_masks() const { return true; }
    // Schedule knob overrides (`qrnn run --knob`) for the pipelines the layer compiles, given before its first
    // forward; layers whose schedules take no knobs ignore them.
    virtual void set_knobs(const Knobs &) {}
    // Compiles what a forward with a tape and a backward run now (a trainer calls it before its timed steps);
    // otherwise layers may compile them on first use, so an inference-only stack never compiles them.
    virtual void prepare_training() {}
    // int8 inference (docs/int8.md), for layers that have it: while calibrating (on), a forward runs in f32 and records
    // the largest |input|; turning it off quantizes the weights and fixes the input scale from what it recorded.
    virtual void set_int8_calibration(bool) {}
    // The int8 parameters a calibration (or set_quantized) gave; null before, and for layers without int8.
    virtual const Int8LayerParams *quantized() const { return nullptr; }
    // Sets them (e.g. from a checkpoint) instead of a calibration; throws qrnn::Error for a layer without int8 or
    // parameters of another shape.
    virtual void set_quantized(Int8LayerParams) { fail("layer '", kind(), "' has no int8 path"); }

    virtual std::unique_ptr<Tape> make_tape() const = 0;
    // y [T][B][output_size] from x [T][B][input_size]; advances state. With a tape, saves what backward needs.
    virtual void forward(const Tensor<float> &x, State &state, Tensor<float> &y, Tape *tape) = 0;
    // From dy (and d of the final state, or null for zero): accumulates every parameter's gradient, writes dx
    // and d of the initial state when they are non-null. The tape is the one of the matching forward.
    virtual void backward(const Tape &tape, const Tensor<float> &dy, const State *d_final, Tensor<float> *dx,
                          State *d_initial) = 0;

    virtual std::vector<Param> params() = 0;
    void zero_grads();
    // Multiply/adds of one forward and of one backward over T steps at batch B, for GFLOP/s.
    virtual double forward_flops(int64_t T, int64_t B) const = 0;
    virtual double backward_flops(int64_t T, int64_t B) const = 0;
};

// Trainable layers by model name ("qrnn", "lstm-onednn", "lstm-halide", "cnn", ...): layer `index` of the stack
// that cfg describes (its input width is cfg.layer_input(index)). A model's record registers its factory
// (ModelPlugin::layer, plugins/model.h).
using LayerFactory = std::function<std::unique_ptr<Layer>(const ModelConfig &cfg, int64_t index)>;
void register_layer_factory(const std::string &model, LayerFactory factory);
bool has_layer_factory(const std::string &model);  // a layer or a stack factory
// Throws qrnn::Error for a model without a layer factory: "model 'X' trains only as a whole stack (...)" for
// one with a stack factory, else "model 'X' is not a stack of trainable layers (those are: ...)".
std::unique_ptr<Layer> make_layer(const ModelConfig &cfg, int64_t index);
std::vector<std::string> layer_stack_models();  // every model with a layer or a stack factory, sorted

// Models whose stack is not one make_layer per cfg.layers (e.g. "qrnn-dense": one block holding every layer,
// since layer l reads all earlier outputs) register the layers of their whole stack instead.
using StackFactory = std::function<std::vector<std::unique_ptr<Layer>>(const ModelConfig &cfg)>;
void register_stack_factory(const std::string &model, StackFactory factory);
// The stack factory's layers, else make_layer(cfg, l) for l < cfg.layers (what LayerStack(cfg) holds).
std::vector<std::unique_ptr<Layer>> make_layers(const ModelConfig &cfg);

}  // namespace qrnn::nn
