#include "nn/dense_stack.h"

#include "core/error.h"
#include "nn/qrnn_layer.h"
#include "reference/dense.h"

namespace qrnn::nn {
namespace {
struct DenseTape : Tape {
    Tensor<float> buffer;                   // [T][B][n + (L-1)*m]: the input and every layer's h but the last
    std::vector<Tensor<float>> c;           // per layer [T][B][m]
    std::vector<LayerState<float>> states;  // per layer, before the forward
    std::vector<LayerMasks> masks;
    std::vector<LayerTapeData> data;
    int64_t time = 0;
    bool recorded = false;
};

// A tensor that only carries a shape (LayerCall's x / h when their strided views are what the pipeline uses).
Tensor<float> shape_only(std::vector<int64_t> shape) {
    Tensor<float> t;
    t.shape = std::move(shape);
    return t;
}

std::string name(const char *what, int64_t l) { return std::string(what) + "_" + std::to_string(l); }

// The last `rows` steps of (history ++ channels [0, n) of buffer [T][B][width]), as next_history does.
Tensor<float> next_history_of_prefix(const Tensor<float> &history, const Tensor<float> &buffer, int64_t n, int64_t rows) {
    const int64_t T = buffer.dim(0), B = buffer.dim(1), width = buffer.dim(2), H = history.dim(0);
    Tensor<float> next({std::max<int64_t>(rows, 1), B, n});
    for (int64_t r = 0; r < rows; r++) {
        const int64_t t = T - rows + r;
        for (int64_t b = 0; b < B; b++) {
            const float *src = t >= 0 ? &buffer.data[(t * B + b) * width] : &history.data[((H + t) * B + b) * n];
            std::copy(src, src + n, &next.data[(r * B + b) * n]);
        }
    }
    return next;
}
}  // namespace

DenseQrnn::DenseQrnn(const ModelConfig &cfg)
    : cfg_(cfg), target_(parse_target(cfg.target)), precision_(parse_precision(cfg.precision)) {
    if (precision_ == Precision::int8) fail("dense QRNN: no int8 path (--precision f32 or bf16)");
    params_ = init_params(cfg, ref::dense_layer_inputs(cfg));
    for (auto &p : params_) grads_.push_back({Tensor<float>(p.weights.shape), Tensor<float>(p.bias.shape)});
    inference_.resize(cfg.layers);
    scratch_.resize(cfg.layers);
}

CompiledTrainingLayer &DenseQrnn::training() {
    if (!training_) {
        TrainingLayerOptions options;
        options.precision = precision_;
        training_ = compiled_training_layer(cfg_.pooling_variant(), cfg_.schedule, knobs_, target_, options, cfg_.hidden);
    }
    return *training_;
}

LayerState<float> DenseQrnn::layer_state(const State &s, int64_t l) { return {s.at(name("history", l)), s.at(name("c", l))}; }

void DenseQrnn::set_layer_state(State &s, int64_t l, LayerState<float> v) {
    s.at(name("history", l)) = std::move(v.history);
    s.at(name("c", l)) = std::move(v.c);
}

State DenseQrnn::initial_state(int64_t batch) const {
    State s;
    for (int64_t l = 0; l < cfg_.layers; l++) {
        s.names.push_back(name("history", l));
        s.tensors.push_back(Tensor<float>({std::max<int64_t>(cfg_.history_rows(), 1), batch, width(l)}));
        s.names.push_back(name("c", l));
        s.tensors.push_back(Tensor<float>({batch, cfg_.hidden}));
    }
    return s;
}

std::unique_ptr<Tape> DenseQrnn::make_tape() const { return std::make_unique<DenseTape>(); }

void DenseQrnn::forward(const Tensor<float> &x, State &state, Tensor<float> &y, Tape *tape) {
    const int64_t T = x.dim(0), B = x.dim(1), n = cfg_.input, m = cfg_.hidden, L = cfg_.layers, W = width(L - 1);
    if (x.shape.size() != 3 || x.dim(2) != n) fail("dense QRNN forward: input ", x.shape_str(), " must be [T][B][", n, "]");
    DenseTape *t = nullptr;
    if (tape && !(t = dynamic_cast<DenseTape *>(tape))) fail("dense QRNN forward: the tape is not a dense QRNN tape");
    Tensor<float> &buffer = ensure_shape(t ? t->buffer : buffer_, {T, B, W});
    if (t) t->c.resize(L), t->states.resize(L), t->masks.resize(L), t->data.resize(L), t->time = state.time;
    for (int64_t i = 0; i < T * B; i++) std::copy(&x.data[i * n], &x.data[(i + 1) * n], &buffer.data[i * W]);
    ensure_shape(y, {T, B, m});
    for (int64_t l = 0; l < L; l++) {
        LayerState<float> s = layer_state(state, l);
        Tensor<float> &c = ensure_shape(t ? t->c[l] : c_scratch_, {T, B, m});
        Tensor<float> x_shape = shape_only({T, B, width(l)}), h_shape = shape_only({T, B, m});
        LayerCall call{&x_shape, &s, &params_[l], layer_masks(cfg_, l), state.time, l + 1 < L ? &h_shape : &y, &c};
        call.x_view = channel_slice(buffer.data.data(), T, B, W, 0, width(l));
        if (l + 1 < L) call.h_view = channel_slice(buffer.data.data(), T, B, W, width(l), m);
        if (t) {
            training().forward(call, t->data[l]);
            t->states[l] = s, t->masks[l] = call.masks;
        } else {
            if (!inference_[l])
                inference_[l] = compiled_layer(cfg_.pooling_variant(), cfg_.schedule, knobs_,
                                               {cfg_.seq, cfg_.batch, width(l), m, cfg_.window}, target_, precision_);
            inference_[l]->run(call);
        }
        s.history = next_history_of_prefix(s.history, buffer, width(l), cfg_.history_rows());
        std::copy(c.data.end() - B * m, c.data.end(), s.c.data.begin());
        set_layer_state(state, l, std::move(s));
    }
    if (t) t->recorded = true;
    state.time += T;
}

void DenseQrnn::backward(const Tape &tape, const Tensor<float> &dy, const State *d_final, Tensor<float> *dx,
                         State *d_initial) {
    auto *t = dynamic_cast<const DenseTape *>(&tape);
    if (!t || !t->recorded) fail("dense QRNN backward: no tape of a forward of this block");
    const int64_t T = t->buffer.dim(0), B = t->buffer.dim(1), n = cfg_.input, m = cfg_.hidden, L = cfg_.layers;
    const int64_t W = t->buffer.dim(2);
    Tensor<float> &d_buffer = d_buffer_;
    if (d_initial) *d_initial = initial_state(B), d_initial->time = t->time;
    Tensor<float> dc_final({B, m});
    for (int64_t l = L - 1; l >= 0; l--) {
        if (d_final) dc_final = d_final->at(name("c", l));
        Tensor<float> x_shape = shape_only({T, B, width(l)}), h_shape = shape_only({T, B, m});
        // The backward only reads the call's c (the forward's, kept by the tape).
        LayerCall call{&x_shape, &t->states[l], &params_[l], t->masks[l], t->time, &h_shape, const_cast<Tensor<float> *>(&t->c[l])};
        call.x_view = channel_slice(const_cast<float *>(t->buffer.data.data()), T, B, W, 0, width(l));
        // dh: dy for the last layer, else this layer's output slice of the gradient buffer (read in place).
        if (l + 1 < L) call.dh_view = channel_slice(d_buffer.data.data(), T, B, W, width(l), m);
        LayerGradsF &g = scratch_[l];
        training().backward(call, t->data[l], l + 1 < L ? h_shape : dy, dc_final, g);
        add_into(grads_[l].weights, g.dweights);
        add_into(grads_[l].bias, g.dbias);
        if (d_final) add_final_history_grad(d_final->at(name("history", l)), cfg_.history_rows(), g);
        const int64_t w = width(l);
        if (l == L - 1) {  // the last layer reads the whole buffer (w = W): its dx is the gradient buffer's start
            std::swap(d_buffer, g.dx);  // both [T][B][W] after the first step: nothing is reallocated
        } else {
            for (int64_t i = 0; i < T * B; i++) {
                float *dst = &d_buffer.data[i * W];
                const float *src = &g.dx.data[i * w];
                for (int64_t c = 0; c < w; c++) dst[c] += src[c];
            }
        }
        if (d_initial) set_layer_state(*d_initial, l, {g.dhistory, g.dc0});
    }
    if (dx) {
        ensure_shape(*dx, {T, B, n});
        for (int64_t i = 0; i < T * B; i++) std::copy(&d_buffer.data[i * W], &d_buffer.data[i * W + n], &dx->data[i * n]);
    }
}

std::vector<Param> DenseQrnn::params() {
    std::vector<Param> out;
    for (int64_t l = 0; l < cfg_.layers; l++) {
        const std::string layer = "layer_" + std::to_string(l) + "/";
        out.push_back({layer + "weights", &params_[l].weights, &grads_[l].weights});
        out.push_back({layer + "bias", &params_[l].bias, &grads_[l].bias});
    }
    return out;
}

double DenseQrnn::forward_flops(int64_t T, int64_t B) const {
    double total = 0;
    for (int64_t l = 0; l < cfg_.layers; l++) total += qrnn_flops(cfg_.pooling_variant(), T, B, width(l), cfg_.hidden, cfg_.window, false);
    return total;
}

double DenseQrnn::backward_flops(int64_t T, int64_t B) const {
    double total = 0;
    for (int64_t l = 0; l < cfg_.layers; l++) total += qrnn_flops(cfg_.pooling_variant(), T, B, width(l), cfg_.hidden, cfg_.window, true);
    return total;
}

}  // namespace qrnn::nn
