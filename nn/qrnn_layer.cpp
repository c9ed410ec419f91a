#include "nn/qrnn_layer.h"

#include "core/error.h"

namespace qrnn::nn {
namespace {
struct QrnnTape : Tape {
    Tensor<float> x, c;        // the input and the cell states [T][B][m] of the forward
    LayerState<float> state;   // the state before it
    LayerMasks masks;
    int64_t time = 0;
    LayerTapeData data;
    bool recorded = false;
};

}  // namespace

void add_into(Tensor<float> &a, const Tensor<float> &b) {
    for (size_t i = 0; i < a.size(); i++) a.data[i] += b.data[i];
}

// The final history is a copy of the last k-1 inputs (of x, or of the old history when T < k-1).
void add_final_history_grad(const Tensor<float> &dh_final, int64_t rows, LayerGradsF &grads) {
    const int64_t T = grads.dx.dim(0), H = grads.dhistory.dim(0), row = grads.dx.size() / T;
    for (int64_t r = 0; r < rows; r++) {
        const int64_t time = T - rows + r;
        float *dst = time >= 0 ? &grads.dx.data[time * row] : &grads.dhistory.data[(H + time) * row];
        for (int64_t i = 0; i < row; i++) dst[i] += dh_final.data[r * row + i];
    }
}

LayerState<float> layer_state(const State &s) { return {s.at("history"), s.at("c")}; }

State make_state(LayerState<float> s, int64_t time) {
    State out;
    out.names = {"history", "c"};
    out.tensors = {std::move(s.history), std::move(s.c)};
    out.time = time;
    return out;
}

QrnnLayer::QrnnLayer(const ModelConfig &cfg, int64_t index, const Knobs &knobs)
    : cfg_(cfg), index_(index), n_(cfg.layer_input(index)) {
    if (index < 0 || index >= cfg.layers) fail("QRNN layer index ", index, " out of range (", cfg.layers, " layers)");
    params_ = init_params(cfg)[index];
    grads_ = {Tensor<float>(params_.weights.shape), Tensor<float>(params_.bias.shape)};
    training_ = compiled_training_layer(cfg.pooling, cfg.schedule, knobs, cfg.target);
}

State QrnnLayer::initial_state(int64_t batch) const {
    return make_state({Tensor<float>({std::max<int64_t>(cfg_.history_rows(), 1), batch, n_}), Tensor<float>({batch, cfg_.hidden})}, 0);
}

std::unique_ptr<Tape> QrnnLayer::make_tape() const { return std::make_unique<QrnnTape>(); }

void QrnnLayer::forward(const Tensor<float> &x, State &state, Tensor<float> &y, Tape *tape) {
    const int64_t T = x.dim(0), B = x.dim(1), m = cfg_.hidden;
    LayerState<float> s = layer_state(state);
    if (y.shape != std::vector<int64_t>{T, B, m}) y = Tensor<float>({T, B, m});
    Tensor<float> c({T, B, m});
    LayerCall call{&x, &s, &params_, layer_masks(cfg_, index_), state.time, &y, &c};
    if (tape) {
        auto *t = dynamic_cast<QrnnTape *>(tape);
        if (!t) fail("QRNN layer forward: the tape is not a QRNN tape (make it with make_tape)");
        training_->forward(call, t->data);
        t->x = x, t->state = s, t->masks = call.masks, t->time = state.time, t->recorded = true;
        t->c = c;
    } else {
        if (!inference_) {
            LayerShape shape{cfg_.seq, cfg_.batch, n_, m, cfg_.window};
            inference_ = compiled_layer(cfg_.pooling, cfg_.schedule, {}, shape, cfg_.target);
        }
        inference_->run(call);
    }
    state.at("history") = next_history(s.history, x, cfg_.history_rows());
    std::copy(c.data.end() - B * m, c.data.end(), state.at("c").data.begin());
    state.time += T;
}

void QrnnLayer::backward(const Tape &tape, const Tensor<float> &dy, const State *d_final, Tensor<float> *dx,
                         State *d_initial) {
    auto *t = dynamic_cast<const QrnnTape *>(&tape);
    if (!t || !t->recorded) fail("QRNN layer backward: no tape of a forward of this layer");
    const int64_t T = t->x.dim(0), B = t->x.dim(1), m = cfg_.hidden;
    Tensor<float> dc_final({B, m});
    if (d_final) dc_final = d_final->at("c");
    Tensor<float> y({T, B, m});
    Tensor<float> c = t->c;
    LayerCall call{&t->x, &t->state, &params_, t->masks, t->time, &y, &c};
    training_->backward(call, t->data, dy, dc_final, scratch_);
    add_into(grads_.weights, scratch_.dweights);
    add_into(grads_.bias, scratch_.dbias);
    if (d_final) add_final_history_grad(d_final->at("history"), cfg_.history_rows(), scratch_);
    if (dx) *dx = scratch_.dx;
    if (d_initial) *d_initial = make_state({scratch_.dhistory, scratch_.dc0}, t->time);
}

std::vector<Param> QrnnLayer::params() {
    return {{"weights", &params_.weights, &grads_.weights}, {"bias", &params_.bias, &grads_.bias}};
}

double qrnn_flops(const PoolingVariant &v, int64_t T, int64_t B, int64_t n, int64_t m, int64_t k, bool backward) {
    if (backward) return 4.0 * T * B * v.gate_count() * m * n * k + 1.0 * T * B * m * v.backward_flops_per_step;
    return 2.0 * T * B * v.gate_count() * m * n * k + 1.0 * T * B * m * v.flops_per_step;
}

double QrnnLayer::forward_flops(int64_t T, int64_t B) const {
    return qrnn_flops(training_->variant(), T, B, n_, cfg_.hidden, cfg_.window, false);
}

double QrnnLayer::backward_flops(int64_t T, int64_t B) const {
    return qrnn_flops(training_->variant(), T, B, n_, cfg_.hidden, cfg_.window, true);
}

namespace {
const bool registered = [] {
    register_layer_factory("qrnn", [](const ModelConfig &cfg, int64_t index) -> std::unique_ptr<Layer> {
        return std::make_unique<QrnnLayer>(cfg, index);
    });
    return true;
}();
}  // namespace

}  // namespace qrnn::nn
