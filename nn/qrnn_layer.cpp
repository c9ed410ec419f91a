#include "nn/qrnn_layer.h"

#include "core/error.h"
#include "runtime/stack_state.h"

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

// The layer's tensors of an nn::State as the compiled layer's LayerState, moved in and (on scope exit) back.
struct BorrowedState {
    explicit BorrowedState(State &state) : from(state), s{std::move(state.at("history")), std::move(state.at("c"))} {}
    ~BorrowedState() {
        from.at("history") = std::move(s.history);
        from.at("c") = std::move(s.c);
    }
    BorrowedState(const BorrowedState &) = delete;
    BorrowedState &operator=(const BorrowedState &) = delete;

    State &from;
    LayerState<float> s;
};

const QrnnTape &recorded(const Tape &tape) {
    auto *t = dynamic_cast<const QrnnTape *>(&tape);
    if (!t || !t->recorded) fail("QRNN layer backward: no tape of a forward of this layer");
    return *t;
}
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

QrnnLayer::QrnnLayer(const QrnnOptions &opt, int64_t index, const TrainingLayerOptions &options)
    : opt_(opt), index_(index), n_(opt.layer_input(index)), training_options_(options) {
    if (index < 0 || index >= opt.layers) fail("QRNN layer index ", index, " out of range (", opt.layers, " layers)");
    params_ = init_layer_params(opt, index);
    training_options_.precision = opt.precision;
    grads_ = {Tensor<float>(params_.weights.shape), Tensor<float>(params_.bias.shape)};
}

CompiledTrainingLayer &QrnnLayer::training() {
    if (!training_)
        training_ = compiled_training_layer(*opt_.pooling, opt_.schedule, knobs_, opt_.target, training_options_, opt_.hidden);
    return *training_;
}

State QrnnLayer::initial_state(int64_t batch) const {
    return make_state({Tensor<float>({std::max<int64_t>(opt_.history_rows(), 1), batch, n_}), Tensor<float>({batch, opt_.hidden})}, 0);
}

std::unique_ptr<Tape> QrnnLayer::make_tape() const { return std::make_unique<QrnnTape>(); }

void QrnnLayer::forward(const Tensor<float> &x, State &state, Tensor<float> &y, Tape *tape) {
    forward_with(x, nullptr, state, y, tape);
}

void QrnnLayer::forward_with(const Tensor<float> &x, const Tensor<float> *batch_bias, State &state, Tensor<float> &y,
                             Tape *tape) {
    BorrowedState borrowed(state);
    LayerState<float> &s = borrowed.s;
    const int64_t batch = s.c.dim(0);
    if (x.shape.size() != 3 || x.dim(1) != batch || x.dim(2) != n_)
        fail("input x has shape ", x.shape_str(), ", expected [T][", batch, "][", n_, "]");
    const int64_t T = x.dim(0), B = x.dim(1), m = opt_.hidden;
    const TrainingLayerOptions &options = training_options_;
    if (!tape && (options.batch_bias || options.cell_output)) {  // only the training pipeline has these
        if (!scratch_tape_) scratch_tape_ = make_tape();
        tape = scratch_tape_.get();
    }
    ensure_shape(y, {T, B, m});
    auto *t = tape ? dynamic_cast<QrnnTape *>(tape) : nullptr;
    if (tape && !t) fail("QRNN layer forward: the tape is not a QRNN tape (make it with make_tape)");
    if (t && opt_.precision == Precision::int8) fail("QRNN layer: int8 is for inference (a forward with a tape asked)");
    Tensor<float> &c = t ? t->c : c_scratch_;  // the tape keeps c: written there directly
    ensure_shape(c, {T, B, m});
    LayerCall call{&x, &s, &params_, layer_masks(opt_, index_), state.time, &y, &c};
    if (t) {
        training().forward(call, t->data, batch_bias);
        t->x = x, t->state = s, t->masks = call.masks, t->time = state.time, t->recorded = true;
    } else {
        run_inference(call, LayerShape{T, B, n_, m, opt_.window});
    }
    advance_layer_state(s, x, c, opt_.history_rows());
    state.time += T;
}

// The forward without a tape: int8 once calibrated, f32 (recording the input's range) while calibrating.
void QrnnLayer::run_inference(LayerCall &call, const LayerShape &shape) {
    const bool int8 = opt_.precision == Precision::int8;
    if (int8 && int8_.calibrating()) {
        int8_.observe(*call.x);
        if (!calibration_) calibration_ = compiled_layer(*opt_.pooling, opt_.schedule, knobs_, shape, opt_.target);
        return calibration_->run(call);
    }
    if (int8) call.int8 = &int8_params();
    if (!inference_)  // the training schedules are shape-generic: so is their forward
        inference_ = compiled_layer(*opt_.pooling, opt_.schedule, knobs_, shape, opt_.target, opt_.precision);
    inference_->run(call);
}

void QrnnLayer::set_int8_calibration(bool on) {
    if (opt_.precision == Precision::int8) int8_.set(on, params_.weights);
}

const Int8LayerParams &QrnnLayer::int8_params() const { return int8_.params(index_); }

void QrnnLayer::set_quantized(Int8LayerParams p) {
    if (opt_.precision != Precision::int8)
        fail("QRNN layer ", index_, ": int8 parameters for a layer in ", precision_name(opt_.precision));
    int8_.load(std::move(p), params_.weights, index_);
}

void QrnnLayer::backward(const Tape &tape, const Tensor<float> &dy, const State *d_final, Tensor<float> *dx,
                         State *d_initial) {
    backward_with(tape, dy, nullptr, d_final, dx, d_initial, nullptr);
}

void QrnnLayer::backward_with(const Tape &tape, const Tensor<float> &dy, const Tensor<float> *dgates, const State *d_final,
                              Tensor<float> *dx, State *d_initial, Tensor<float> *dbatch_bias) {
    const QrnnTape *t = &recorded(tape);
    const int64_t T = t->x.dim(0), B = t->x.dim(1), m = opt_.hidden;
    Tensor<float> dc_final({B, m});
    if (d_final) dc_final = d_final->at("c");
    ensure_shape(y_scratch_, {T, B, m});
    // The backward only reads the call's c (the forward's cell states, kept by the tape); h is not used.
    LayerCall call{&t->x, &t->state, &params_, t->masks, t->time, &y_scratch_, const_cast<Tensor<float> *>(&t->c)};
    training().backward(call, t->data, dy, dc_final, scratch_, dgates);
    if (dbatch_bias) *dbatch_bias = scratch_.dbatch_bias;
    add_into(grads_.weights, scratch_.dweights);
    add_into(grads_.bias, scratch_.dbias);
    if (d_final) add_final_history_grad(d_final->at("history"), opt_.history_rows(), scratch_);
    if (dx) std::swap(*dx, scratch_.dx);  // no copy: the scratch is rewritten by the next call
    if (d_initial) *d_initial = make_state({scratch_.dhistory, scratch_.dc0}, t->time);
}

const Tensor<float> &QrnnLayer::tape_cell(const Tape &tape) { return recorded(tape).c; }

void QrnnLayer::tape_gate(const Tape &tape, char letter, Tensor<float> &out) const {
    const QrnnTape &t = recorded(tape);
    const int g = opt_.pooling->gate_index(letter);
    if (g < 0) fail("QRNN layer: pooling '", opt_.pooling->name, "' has no gate '", letter, "'");
    const Tensor<float> &gates = t.data.gates;  // [G][T_pad][B][m_pad]
    const int64_t T = t.c.dim(0), B = t.c.dim(1), m = t.c.dim(2);
    ensure_shape(out, {T, B, m});
    for (int64_t s = 0; s < T; s++)
        for (int64_t b = 0; b < B; b++)
            std::copy_n(&gates(g, s, b, 0), m, &out(s, b, 0));
}

std::vector<Param> QrnnLayer::params() {
    return {{"weights", &params_.weights, &grads_.weights}, {"bias", &params_.bias, &grads_.bias}};
}

double qrnn_flops(const PoolingVariant &v, int64_t T, int64_t B, int64_t n, int64_t m, int64_t k, bool backward) {
    if (backward) return 4.0 * T * B * v.gate_count() * m * n * k + 1.0 * T * B * m * v.backward_flops_per_step;
    return 2.0 * T * B * v.gate_count() * m * n * k + 1.0 * T * B * m * v.flops_per_step;
}

double QrnnLayer::forward_flops(int64_t T, int64_t B) const {
    return qrnn_flops(*opt_.pooling, T, B, n_, opt_.hidden, opt_.window, false);
}

double QrnnLayer::backward_flops(int64_t T, int64_t B) const {
    return qrnn_flops(*opt_.pooling, T, B, n_, opt_.hidden, opt_.window, true);
}

}  // namespace qrnn::nn
