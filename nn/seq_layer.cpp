#include "nn/seq_layer.h"

#include <cmath>

#include "core/error.h"
#include "core/hash_rng.h"
#include "core/streams.h"
#include "nn/qrnn_layer.h"
#include "runtime/seeded_fill.h"

namespace qrnn::nn {
namespace {
struct SeqTape : Tape {
    Tensor<float> x, cells;
    LayerState<float> state;
    LayerMasks masks;
    std::vector<int32_t> lengths;
    int64_t time = 0;
    LayerTapeData data;
    bool recorded = false;
};

// Row r of the history after sequence b: input time len_b - rows + r (negative: the old history's row H + time).
// Visits (row, b, pointer into x or history) for every row of the new history.
template <class F>
void for_history_rows(int64_t rows, const std::vector<int32_t> &lengths, int64_t H, F f) {
    for (int64_t r = 0; r < rows; r++)
        for (size_t b = 0; b < lengths.size(); b++) {
            const int64_t time = lengths[b] - rows + r;
            f(r, static_cast<int64_t>(b), time, H + time);
        }
}

}  // namespace

SeqOptions seq_model_options(const std::string &model) {
    if (model == "qrnn-varlen") return {1, false};
    if (model == "qrnn-bidir" || model == "qrnn-bidir-varlen") return {2, false};
    if (model == "qrnn-bidir-sum") return {2, true};
    fail("model '", model, "' is not a variable-length/bidirectional QRNN");
}

bool is_seq_model(const std::string &model) {
    return model == "qrnn-varlen" || model == "qrnn-bidir" || model == "qrnn-bidir-sum" || model == "qrnn-bidir-varlen";
}

std::vector<int32_t> seq_lengths(const ModelConfig &cfg) {
    std::vector<int32_t> lengths(cfg.batch, static_cast<int32_t>(cfg.seq));
    if (cfg.model.size() < 7 || cfg.model.compare(cfg.model.size() - 7, 7, "-varlen") != 0) return lengths;
    const uint32_t key = stream_key(cfg.seed, streams::kSeqLengths);
    for (int64_t b = 1; b < cfg.batch; b++)
        lengths[b] = 1 + static_cast<int32_t>(hash_at<uint32_t>(key, 0, 0, static_cast<uint32_t>(b)) % cfg.seq);
    return lengths;
}

void set_stack_lengths(LayerStack &stack, const std::vector<int32_t> &lengths) {
    bool any = false;
    for (size_t l = 0; l < stack.size(); l++)
        if (auto *layer = dynamic_cast<SeqQrnnLayer *>(&stack.layer(l))) layer->set_lengths(lengths), any = true;
    if (!any) fail("set_stack_lengths: the stack has no variable-length/bidirectional QRNN layer");
}

SeqQrnnLayer::SeqQrnnLayer(const ModelConfig &cfg, int64_t index, const SeqOptions &options)
    : cfg_(cfg), index_(index), n_(index == 0 ? cfg.input : cfg.hidden * options.out_width_factor()), options_(options) {
    if (index < 0 || index >= cfg.layers) fail("QRNN layer index ", index, " out of range (", cfg.layers, " layers)");
    const int64_t rows = options.directions * cfg.pooling_variant().gate_count();
    params_ = {Tensor<float>({rows, cfg.window, n_, cfg.hidden}), Tensor<float>({rows, cfg.hidden})};
    const double bound = 1.0 / std::sqrt(static_cast<double>(n_ * cfg.window));  // as init_params
    seeded_fill(params_.weights, cfg.seed, streams::qrnn_weights(static_cast<uint32_t>(index)), bound);
    seeded_fill(params_.bias, cfg.seed, streams::qrnn_bias(static_cast<uint32_t>(index)), bound);
    grads_ = {Tensor<float>(params_.weights.shape), Tensor<float>(params_.bias.shape)};
    lengths_ = seq_lengths(cfg);
    // int8: this one in f32 (calibration), the int8 one once calibrated (compile_int8).
    const Precision precision = parse_precision(cfg.precision) == Precision::bf16 ? Precision::bf16 : Precision::f32;
    compiled_ = compiled_seq_layer(cfg.pooling_variant(), options, cfg.schedule, cfg.hidden, parse_target(cfg.target), precision);
}

State SeqQrnnLayer::initial_state(int64_t batch) const {
    State s = make_state({Tensor<float>({std::max<int64_t>(cfg_.history_rows(), 1), batch, n_}), Tensor<float>({batch, cfg_.hidden})}, 0);
    if (options_.directions == 2) {
        s.names.push_back("c_reverse");
        s.tensors.push_back(Tensor<float>({batch, cfg_.hidden}));
    }
    return s;
}

std::unique_ptr<Tape> SeqQrnnLayer::make_tape() const { return std::make_unique<SeqTape>(); }

void SeqQrnnLayer::forward(const Tensor<float> &x, State &state, Tensor<float> &y, Tape *tape) {
    if (x.shape.size() != 3) fail("QRNN layer input must be [T][B][n], got ", x.shape_str());
    const int64_t T = x.dim(0), B = x.dim(1), m = cfg_.hidden, D = options_.directions;
    if (D == 2 && state.time != 0)
        fail("bidirectional QRNN layer: the reverse direction has no state across calls; feed whole sequences "
             "(the state's time is ", state.time, ", a chunk of a longer sequence)");
    std::vector<int32_t> lengths = lengths_.empty() ? std::vector<int32_t>(B, static_cast<int32_t>(T)) : lengths_;
    if (!tape) {  // the pipeline always writes a tape: a kept one (fresh tensors per call cost their page faults)
        if (!scratch_tape_) scratch_tape_ = make_tape();
    }
    SeqTape *t = dynamic_cast<SeqTape *>(tape ? tape : scratch_tape_.get());
    if (!t) fail("QRNN layer forward: the tape is not a variable-length/bidirectional QRNN tape (make it with make_tape)");
    LayerState<float> s = layer_state(state);
    ensure_shape(y, {T, B, output_size()});
    ensure_shape(t->cells, {D, T, B, m});
    SeqCall call{&x, &lengths, &s, &params_, layer_masks(cfg_, index_), state.time, &y, &t->cells};
    const bool int8 = cfg_.precision == "int8" && !int8_.calibrating();
    if (int8 && tape) fail("QRNN layer: int8 is for inference (a forward with a tape asked)");
    if (int8_.calibrating()) int8_.observe(x);
    if (int8) call.int8 = &int8_params();
    (int8 ? compiled_int8_ : compiled_)->forward(call, t->data);
    // Each sequence's final state: c at T-1 (carried past its end), history = its last k-1 inputs.
    const int64_t rows = cfg_.history_rows(), n = n_, H = s.history.dim(0);
    Tensor<float> &history = state.at("history");
    const Tensor<float> old_history = s.history;
    for_history_rows(rows, lengths, H, [&](int64_t r, int64_t b, int64_t time, int64_t old_row) {
        const float *src = time >= 0 ? &x.data[(time * B + b) * n] : &old_history.data[(old_row * B + b) * n];
        std::copy(src, src + n, &history.data[(r * B + b) * n]);
    });
    std::copy(t->cells.data.begin() + (T - 1) * B * m, t->cells.data.begin() + T * B * m, state.at("c").data.begin());
    if (D == 2) std::copy(t->cells.data.begin() + T * B * m, t->cells.data.begin() + (T + 1) * B * m, state.at("c_reverse").data.begin());
    if (tape) t->x = x, t->state = std::move(s), t->masks = call.masks, t->lengths = lengths, t->time = state.time, t->recorded = true;
    state.time += T;
}

void SeqQrnnLayer::backward(const Tape &tape, const Tensor<float> &dy, const State *d_final, Tensor<float> *dx,
                            State *d_initial) {
    auto *t = dynamic_cast<const SeqTape *>(&tape);
    if (!t || !t->recorded) fail("QRNN layer backward: no tape of a forward of this layer");
    const int64_t T = t->x.dim(0), B = t->x.dim(1), m = cfg_.hidden, D = options_.directions, n = n_;
    Tensor<float> dc_final({D, B, m});
    if (d_final) {
        std::copy(d_final->at("c").data.begin(), d_final->at("c").data.end(), dc_final.data.begin());
        if (D == 2) std::copy(d_final->at("c_reverse").data.begin(), d_final->at("c_reverse").data.end(), dc_final.data.begin() + B * m);
    }
    Tensor<float> y_shape;
    y_shape.shape = {T, B, output_size()};
    // The backward only reads the call's cells (the forward's, kept by the tape).
    SeqCall call{&t->x, &t->lengths, &t->state, &params_, t->masks, t->time, &y_shape, const_cast<Tensor<float> *>(&t->cells)};
    compiled_->backward(call, t->data, dy, dc_final, scratch_);
    add_into(grads_.weights, scratch_.dweights);
    add_into(grads_.bias, scratch_.dbias);
    if (d_final) {  // the final history is a copy of each sequence's last k-1 inputs
        const Tensor<float> &dh_final = d_final->at("history");
        for_history_rows(cfg_.history_rows(), t->lengths, scratch_.dhistory.dim(0), [&](int64_t r, int64_t b, int64_t time, int64_t row) {
            float *dst = time >= 0 ? &scratch_.dx.data[(time * B + b) * n] : &scratch_.dhistory.data[(row * B + b) * n];
            for (int64_t c = 0; c < n; c++) dst[c] += dh_final.data[(r * B + b) * n + c];
        });
    }
    if (dx) std::swap(*dx, scratch_.dx);  // no copy: the scratch is rewritten by the next call
    if (d_initial) {
        *d_initial = initial_state(B);
        d_initial->time = t->time;
        d_initial->at("history") = scratch_.dhistory;
        d_initial->at("c") = scratch_.dc0;
    }
}

void SeqQrnnLayer::compile_int8() {
    if (!compiled_int8_)
        compiled_int8_ = compiled_seq_layer(cfg_.pooling_variant(), options_, cfg_.schedule, cfg_.hidden, parse_target(cfg_.target),
                                            Precision::int8);
}

void SeqQrnnLayer::set_int8_calibration(bool on) {
    if (cfg_.precision != "int8") return;
    int8_.set(on, params_.weights);
    if (!on) compile_int8();
}

void SeqQrnnLayer::set_quantized(Int8LayerParams p) {
    if (cfg_.precision != "int8") fail("QRNN layer ", index_, ": int8 parameters for a layer in ", cfg_.precision);
    int8_.load(std::move(p), params_.weights, index_);
    compile_int8();
}

std::vector<Param> SeqQrnnLayer::params() {
    return {{"weights", &params_.weights, &grads_.weights}, {"bias", &params_.bias, &grads_.bias}};
}

double SeqQrnnLayer::forward_flops(int64_t T, int64_t B) const {
    return options_.directions * qrnn_flops(compiled_->variant(), T, B, n_, cfg_.hidden, cfg_.window, false);
}

double SeqQrnnLayer::backward_flops(int64_t T, int64_t B) const {
    return options_.directions * qrnn_flops(compiled_->variant(), T, B, n_, cfg_.hidden, cfg_.window, true);
}

}  // namespace qrnn::nn
