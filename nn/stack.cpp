#include "nn/stack.h"

#include "core/error.h"

namespace qrnn::nn {

LayerStack::LayerStack(const ModelConfig &cfg) : layers_(make_layers(cfg)) {
    outputs_.resize(layers_.size());
    input_grads_.resize(layers_.size());
}

std::vector<State> LayerStack::initial_state(int64_t batch) const {
    std::vector<State> states;
    for (auto &l : layers_) states.push_back(l->initial_state(batch));
    return states;
}

Tapes LayerStack::make_tapes() const {
    Tapes tapes;
    for (auto &l : layers_) tapes.push_back(l->make_tape());
    return tapes;
}

void LayerStack::set_stochastic(bool on) {
    for (auto &l : layers_) l->set_stochastic(on);
}

void LayerStack::set_mask_draw(uint64_t draw) {
    for (auto &l : layers_) l->set_mask_draw(draw);
}

void LayerStack::zero_grads() {
    for (auto &l : layers_) l->zero_grads();
}

const Tensor<float> &LayerStack::forward(const Tensor<float> &x, std::vector<State> &states, Tapes *tapes) {
    if (states.size() != layers_.size() || (tapes && tapes->size() != layers_.size()))
        fail("layer stack of ", layers_.size(), " layers got ", states.size(), " states");
    const Tensor<float> *input = &x;
    for (size_t l = 0; l < layers_.size(); l++) {
        layers_[l]->forward(*input, states[l], outputs_[l], tapes ? (*tapes)[l].get() : nullptr);
        input = &outputs_[l];
    }
    return *input;
}

void LayerStack::backward(const Tapes &tapes, const Tensor<float> &dy, const std::vector<State> *d_final,
                          Tensor<float> *dx, std::vector<State> *d_initial) {
    if (tapes.size() != layers_.size()) fail("layer stack of ", layers_.size(), " layers got ", tapes.size(), " tapes");
    if (d_initial) d_initial->resize(layers_.size());
    const Tensor<float> *d_out = &dy;
    for (size_t l = layers_.size(); l-- > 0;) {
        Tensor<float> *d_in = l == 0 ? dx : &input_grads_[l];
        // Layers write into a state of their own shape (named tensors): give them one the first time.
        if (d_initial && (*d_initial)[l].names.empty()) (*d_initial)[l] = layers_[l]->initial_state(dy.dim(1));
        layers_[l]->backward(*tapes[l], *d_out, d_final ? &(*d_final)[l] : nullptr, d_in,
                             d_initial ? &(*d_initial)[l] : nullptr);
        d_out = &input_grads_[l];
    }
}

double LayerStack::forward_flops(int64_t T, int64_t B) const {
    double total = 0;
    for (auto &l : layers_) total += l->forward_flops(T, B);
    return total;
}

double LayerStack::backward_flops(int64_t T, int64_t B) const {
    double total = 0;
    for (auto &l : layers_) total += l->backward_flops(T, B);
    return total;
}

}  // namespace qrnn::nn
