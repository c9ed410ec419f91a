// A stack of trainable layers (nn/layer.h) of one model: layer l feeds layer l+1, one state and one tape per
// layer, backward in reverse order. Dropout between layers (ModelConfig::dropout, when stochastic) is each
// layer's own input mask (core/layout.h); for layers without masks (LSTM, CNN) the stack applies it
// (nn/dropout.h, stream 2 + l at the layer's state time and mask draw), so every model gets the same regularisation.
#pragma once
#include "nn/layer.h"

namespace qrnn::nn {

using Tapes = std::vector<std::unique_ptr<Tape>>;

class LayerStack {
public:
    explicit LayerStack(const ModelConfig &cfg);  // make_layers(cfg): make_layer(cfg, l) for every layer, or the model's stack factory
    size_t size() const { return layers_.size(); }
    Layer &layer(size_t l) { return *layers_.at(l); }
    const Layer &layer(size_t l) const { return *layers_.at(l); }
    std::vector<State> initial_state(int64_t batch) const;
    Tapes make_tapes() const;
    void set_stochastic(bool on);
    void set_mask_draw(uint64_t draw);  // Layer::set_mask_draw of every layer
    void set_knobs(const Knobs &knobs);  // Layer::set_knobs of every layer
    void prepare_training();              // Layer::prepare_training of every layer
    void set_int8_calibration(bool on);  // Layer::set_int8_calibration of every layer
    // An int8 stack's calibration: forwards of each of `batches` from zero states in f32 between
    // set_int8_calibration(true) and (false).
    void calibrate_int8(const std::vector<Tensor<float>> &batches);
    // Every layer's int8 parameters (Layer::quantized), in order; throws qrnn::Error naming a layer that has none.
    std::vector<const Int8LayerParams *> int8_layers() const;
    void zero_grads();

    // The last layer's output (valid until the next forward); advances every state; records tapes if given.
    const Tensor<float> &forward(const Tensor<float> &x, std::vector<State> &states, Tapes *tapes);
    // From dy of the last layer's output and d of every final state (null: zero): accumulates every layer's
    // parameter gradients, writes dx of the stack input and d of every initial state when non-null.
    void backward(const Tapes &tapes, const Tensor<float> &dy, const std::vector<State> *d_final, Tensor<float> *dx,
                  std::vector<State> *d_initial);

    double forward_flops(int64_t T, int64_t B) const;
    double backward_flops(int64_t T, int64_t B) const;

private:
    // Layer l's input through the stack's dropout, the mask at state time `time`.
    bool drops_input(size_t l) const;
    void drop_input(size_t l, const Tensor<float> &x, Tensor<float> &out, int64_t time) const;

    std::vector<std::unique_ptr<Layer>> layers_;
    std::vector<Tensor<float>> outputs_, input_grads_, dropped_inputs_;
    double dropout_ = 0;
    uint32_t seed_ = 0;
    bool stochastic_ = false;
    uint64_t draw_ = 0;
    // Per layer, of the forward that recorded tapes: whether the stack dropped its input, at which state time.
    std::vector<char> taped_drops_;
    std::vector<int64_t> taped_times_;
};

}  // namespace qrnn::nn
