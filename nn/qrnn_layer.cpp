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

const QrnnTape &recorded(const Tape &tape) {
    auto *t = dynamic_cast<const QrnnTape *>(&tape);
    if (!t || !t->recorded) fail("QRNN layer backward: no tape of a forward of this layer");
    return *t;
}

// a += b, elementwise (same shape).
void add_into(Tensor<float> &a, const Tensor<float> &b) {
    for (size_t i = 0; i < a.size(); i++) a.data[i] += b.data[i];
}
}  // namespace

LayerState<float> layer_state(const State &s) { return {s.at("history"), s.at("c")}; }

State make_state(LayerState<float> s, int64_t time) {
    State out;
    out.names = {"history", "c"};
    out.tensors = {std::move(s.history), std::move(s.c)};
    out.time = time;
    return out;
}

QrnnLayer::QrnnLayer(const ModelConfig &cfg, int64_t index, const Knobs &knobs, const TrainingLayerOptions &options)
    : cfg_(cfg), index_(index), n_(cfg.layer_input(index)) {
    if (index < 0 || index >= cfg.layers) fail("QRNN layer index ", index, " out of range (", cfg.layers, " layers)");
    params_ = init_params(cfg)[index];
    grads_ = {Tensor<float>(params_.weights.shape), Tensor<float>(params_.bias.shape)};
    training_ = compiled_training_layer(cfg.pooling, cfg.schedule, knobs, cfg.target, options);
}

State QrnnLayer::initial_state(int64_t batch) const {
    return make_state({Tensor<float>({std::max<int64_t>(cfg_.history_rows(), 1), batch, n_}), Tensor<float>({batch, cfg_.hidden})}, 0);
}

std::unique_ptr<Tape> QrnnLayer::make_tape() const { return std::make_unique<QrnnTape>(); }

void QrnnLayer::forward(const Tensor<float> &x, State &state, Tensor<float> &y, Tape *tape) {
    forward_with(x, nullptr, state, y, tape);
}

void QrnnLayer::forward_with(const Tensor<float> &x, const Tensor<float> *batch_bias, State &state, Tensor<float> &y,
                             Tape *tape) {
    const int64_t T = x.dim(0), B = x.dim(1), m = cfg_.hidden;
    const TrainingLayerOptions &options = training_->options();
    if (!tape && (options.batch_bias || options.cell_output)) {  // only the training pipeline has these
        if (!scratch_tape_) scratch_tape_ = make_tape();
        tape = scratch_tape_.get();
    }
    LayerState<float> s = layer_state(state);
    if (y.shape != std::vector<int64_t>{T, B, m}) y = Tensor<float>({T, B, m});
    Tensor<float> c({T, B, m});
    LayerCall call{&x, &s, &params_, layer_masks(cfg_, index_), state.time, &y, &c};
    if (tape) {
        auto *t = dynamic_cast<QrnnTape *>(tape);
        if (!t) fail("QRNN layer forward: the tape is not a QRNN tape (make it with make_tape)");
        training_->forward(call, t->data, batch_bias);
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
    backward_with(tape, dy, nullptr, d_final, dx, d_initial, nullptr);
}

void QrnnLayer::backward_with(const Tape &tape, const Tensor<float> &dy, const Tensor<float> *dgates, const State *d_final,
                              Tensor<float> *dx, State *d_initial, Tensor<float> *dbatch_bias) {
    const QrnnTape *t = &recorded(tape);
    const int64_t T = t->x.dim(0), B = t->x.dim(1), m = cfg_.hidden;
    Tensor<float> dc_final({B, m});
    if (d_final) dc_final = d_final->at("c");
    Tensor<float> y({T, B, m});
    Tensor<float> c = t->c;
    LayerCall call{&t->x, &t->state, &params_, t->masks, t->time, &y, &c};
    training_->backward(call, t->data, dy, dc_final, scratch_, dgates);
    if (dbatch_bias) *dbatch_bias = scratch_.dbatch_bias;
    add_into(grads_.weights, scratch_.dweights);
    add_into(grads_.bias, scratch_.dbias);
    // The final history is a copy of the last k-1 inputs (of x, or of the old history when T < k-1).
    if (d_final) {
        const Tensor<float> &dh_final = d_final->at("history");
        const int64_t rows = cfg_.history_rows(), H = scratch_.dhistory.dim(0), row = B * n_;
        for (int64_t r = 0; r < rows; r++) {
            const int64_t time = T - rows + r;
            float *dst = time >= 0 ? &scratch_.dx.data[time * row] : &scratch_.dhistory.data[(H + time) * row];
            for (int64_t i = 0; i < row; i++) dst[i] += dh_final.data[r * row + i];
        }
    }
    if (dx) *dx = scratch_.dx;
    if (d_initial) *d_initial = make_state({scratch_.dhistory, scratch_.dc0}, t->time);
}

const Tensor<float> &QrnnLayer::tape_cell(const Tape &tape) { return recorded(tape).c; }

Tensor<float> QrnnLayer::tape_gate(const Tape &tape, char letter) const {
    const QrnnTape &t = recorded(tape);
    const int g = training_->variant().gate_index(letter);
    if (g < 0) fail("QRNN layer: pooling '", cfg_.pooling, "' has no gate '", letter, "'");
    const Tensor<float> &gates = t.data.gates;  // [G][T_pad][B][m_pad]
    const int64_t T = t.c.dim(0), B = t.c.dim(1), m = t.c.dim(2);
    Tensor<float> out({T, B, m});
    for (int64_t s = 0; s < T; s++)
        for (int64_t b = 0; b < B; b++)
            std::copy_n(&gates(g, s, b, 0), m, &out(s, b, 0));
    return out;
}

std::vector<Param> QrnnLayer::params() {
    return {{"weights", &params_.weights, &grads_.weights}, {"bias", &params_.bias, &grads_.bias}};
}

double QrnnLayer::forward_flops(int64_t T, int64_t B) const {
    const PoolingVariant &v = training_->variant();
    return 2.0 * T * B * v.gate_count() * cfg_.hidden * n_ * cfg_.window + 1.0 * T * B * cfg_.hidden * v.flops_per_step;
}

// Two GEMMs of the forward's size (dweights, dinput) and the backward scan.
double QrnnLayer::backward_flops(int64_t T, int64_t B) const {
    const PoolingVariant &v = training_->variant();
    return 4.0 * T * B * v.gate_count() * cfg_.hidden * n_ * cfg_.window +
           1.0 * T * B * cfg_.hidden * v.backward_flops_per_step;
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
