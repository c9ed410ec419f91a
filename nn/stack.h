// A stack of trainable layers (nn/layer.h) of one model: layer l feeds layer l+1 (dropout between them is
// each layer's input mask, core/layout.h), one state and one tape per layer, backward in reverse order.
#pragma once
#include "nn/layer.h"

namespace qrnn::nn {

using Tapes = std::vector<std::unique_ptr<Tape>>;

class LayerStack {
public:
    explicit LayerStack(const ModelConfig &cfg);  // make_layers(cfg): make_layer(cfg, l) for every layer, or the model's stack factory
    size_t size() const { return layers_.size(); }
    Layer &layer(size_t l) { return *layers_.at(l); }
    std::vector<State> initial_state(int64_t batch) const;
    Tapes make_tapes() const;
    void set_stochastic(bool on);
    void set_mask_draw(uint64_t draw);  // Layer::set_mask_draw of every layer
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
    std::vector<std::unique_ptr<Layer>> layers_;
    std::vector<Tensor<float>> outputs_, input_grads_;
};

}  // namespace qrnn::nn
