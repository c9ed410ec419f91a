#include "nn/stack.h"

#include "core/error.h"
#include "nn/dropout.h"

namespace qrnn::nn {

LayerStack::LayerStack(const ModelConfig &cfg)
    : layers_(make_layers(cfg)), dropout_(cfg.dropout), seed_(cfg.seed), stochastic_(cfg.stochastic), draw_(cfg.mask_draw) {
    outputs_.resize(layers_.size());
    input_grads_.resize(layers_.size());
    dropped_inputs_.resize(layers_.size());
    taped_drops_.resize(layers_.size());
    taped_times_.resize(layers_.size());
}

bool LayerStack::drops_input(size_t l) const { return l > 0 && stochastic_ && dropout_ > 0 && !layers_[l]->has_masks(); }

void LayerStack::drop_input(size_t l, const Tensor<float> &x, Tensor<float> &out, int64_t time) const {
    dropout_into(x, out, dropout_, seed_, 2 + static_cast<uint32_t>(l), time, draw_);
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
    stochastic_ = on;
    for (auto &l : layers_) l->set_stochastic(on);
}

void LayerStack::set_knobs(const Knobs &knobs) {
    for (auto &l : layers_) l->set_knobs(knobs);
}

void LayerStack::prepare_training() {
    for (auto &l : layers_) l->prepare_training();
}

void LayerStack::set_int8_calibration(bool on) {
    for (auto &l : layers_) l->set_int8_calibration(on);
}

void LayerStack::calibrate_int8(const std::vector<Tensor<float>> &batches) {
    set_int8_calibration(true);
    for (const Tensor<float> &x : batches) {
        std::vector<State> states = initial_state(x.dim(1));
        forward(x, states, nullptr);
    }
    set_int8_calibration(false);
}

std::vector<const Int8LayerParams *> LayerStack::int8_layers() const {
    std::vector<const Int8LayerParams *> out;
    for (size_t l = 0; l < layers_.size(); l++) {
        const Int8LayerParams *q = layers_[l]->quantized();
        if (!q) fail("layer ", l, " ('", layers_[l]->kind(), "'): no int8 parameters (not calibrated, or no int8 path)");
        out.push_back(q);
    }
    return out;
}

void LayerStack::set_mask_draw(uint64_t draw) {
    draw_ = draw;
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
        const bool drops = drops_input(l);
        if (tapes) taped_drops_[l] = drops, taped_times_[l] = states[l].time;
        if (drops) {
            drop_input(l, *input, dropped_inputs_[l], states[l].time);
            input = &dropped_inputs_[l];
        }
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
        if (taped_drops_[l]) drop_input(l, input_grads_[l], input_grads_[l], taped_times_[l]);  // the mask's derivative is the mask
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
