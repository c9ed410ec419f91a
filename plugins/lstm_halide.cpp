// Model plugin "lstm-halide": the LSTM of runtime/lstm_params.h in Halide (plugins/lstm_halide.h):
//   projection: P[t][b][g][h] = bias[g][h] + sum_c x[t][b][c] * w_input[c][g][h], one GEMM over all steps
//               (row_gemm of plugins/halide_gemms.h);
//   step:       the recurrent part, P[t] + h_{t-1} R, activations and cell update for one step, run
//               serially over t by the host (as cuDNN's per-step GEMMs).
// Host buffers are padded once (m to gemm_tile(), B to gemm_rows()) so every tile is full.
#include "plugins/lstm_halide.h"

#include "core/activations.h"
#include "core/error.h"
#include "plugins/lstm_model.h"
#include "runtime/kernel.h"
#include "core/precision.h"
#include "runtime/compiled_layer.h"
#include "schedules/cpu_target.h"
#include "schedules/gemm_core.h"

namespace qrnn {
using namespace Halide;

// ---- Algorithm -------------------------------------------------------------------------------------------
LstmStep::LstmStep(bool save_gates, int width, Precision p) : precision(p) {
    pre(h, g, b) = proj(h, g, b);
    if (p == Precision::bf16) {
        // Pairs of input units: h_prev rounded once per step, the weights rounded once (pack_recurrent_pairs_into).
        Var c("c");
        h_prev_rounded(c, b) = cast(BFloat(16), h_prev(c, b));
        r = RDom(0, 2, 0, w_recurrent_pairs.dim(3).extent(), "step_r");
        pre(h, g, b) += cast<float>(w_recurrent_pairs(r.x, h % width, g, r.y, h / width)) *
                        cast<float>(h_prev_rounded(2 * r.y + r.x, b));
    } else {
        r = RDom(0, w_recurrent.dim(2).extent(), "step_r");
        pre(h, g, b) += w_recurrent(h % width, g, r, h / width) * h_prev(r, b);
    }
    Expr i = sigmoid(pre(h, kGateI, b)), f = sigmoid(pre(h, kGateF, b));
    Expr gg = tanh_activation(pre(h, kGateG, b)), o = sigmoid(pre(h, kGateO, b));
    Expr c_new = f * c_prev(h, b) + i * gg;
    Expr h_new = o * tanh_activation(c_new);
    cell(h, b) = save_gates ? Tuple(c_new, h_new, i, f, gg, o) : Tuple(c_new, h_new);
}

// ---- CPU schedule ----------------------------------------------------------------------------------------
// Projection: row_gemm (on the GEMM core).
// Step: on the GEMM core in place (padded): M = h, N = b, K = c, the 4 gates of a unit inside the register tile (the
// cell update reads all four): 1 vector of h x 4 gates x 4 batch rows of accumulators with 32 vector registers, x 2
// rows with 16 (4 spill there: the AVX2 forward took 1.2x the time).
void schedule_lstm_step(LstmStep &s, const Target &target) {
    const int rows = cpu_traits(target).vector_registers >= 32 ? 4 : 2;
    // h from 0 in whole vectors (the buffers are padded), so that a vector of h is one panel's row.
    s.cell.output_buffers()[0].dim(0).set_min(0);
    s.pre.bound(s.g, 0, kLstmGates);
    const OutputImageParam out = s.cell.output_buffers()[0];
    const int vec = target.natural_vector_size<float>();
    GemmDims dims{s.pre, s.h, s.b, {}, {}, {s.r.x}, out.dim(1).extent(), 1, s.r.x.extent()};
    if (s.precision == Precision::bf16) {
        s.h_prev_rounded.compute_root().vectorize(s.h_prev_rounded.args()[0], vec, TailStrategy::RoundUp);
        dims.reduction = {s.r.x, s.r.y};
        dims.k_steps = 2 * s.r.y.extent();
        dims.pairs = true, dims.operand_bytes = 2;
    }
    dims.in_place = true;
    dims.padded = true;
    dims.unrolled = {s.g};
    schedule_gemm(s.cell, dims, out.dim(0).extent(), gemm_blocking(target, GemmTile{1, rows}));
}

CompiledLstmStep::CompiledLstmStep(bool save_gates, Precision precision)
    : width(get_jit_target_from_environment().natural_vector_size<float>()), step(save_gates, width, precision) {
    Target target = get_jit_target_from_environment();
    schedule_lstm_step(step, target);
    pipeline = Pipeline(step.cell);
    compile_kernels({&pipeline}, target);
}

CompiledLstmStep &compiled_lstm_step(bool save_gates, Precision precision) {
    // The environment's target is fixed for the process: each variant looked up (and compiled) once, when first asked
    // for, then a reference into the cache.
    return environment_variant<CompiledLstmStep, 4>(
        2 * save_gates + (precision == Precision::bf16), std::string(save_gates ? "|saving" : "|plain") + "|" + precision_name(precision),
        [&] { return std::make_shared<CompiledLstmStep>(save_gates, precision); });
}

Tensor<float> &pack_recurrent_into(const Tensor<float> &w, int64_t width, int64_t m_pad, Tensor<float> &dst) {
    const int64_t m = w.dim(0), G = w.dim(1);
    ensure_shape(dst, {m_pad / width, m, G, width});
    std::fill(dst.data.begin(), dst.data.end(), 0.0f);
    for (int64_t c = 0; c < m; c++)
        for (int64_t g = 0; g < G; g++)
            for (int64_t h = 0; h < w.dim(2); h++) dst(h / width, c, g, h % width) = w(c, g, h);
    return dst;
}

Tensor<uint16_t> &pack_recurrent_pairs_into(const Tensor<float> &w, int64_t width, int64_t m_pad, Tensor<uint16_t> &dst) {
    const int64_t m = w.dim(0), G = w.dim(1), pairs = (m + 1) / 2;
    ensure_shape(dst, {m_pad / width, pairs, G, width, 2});
    std::fill(dst.data.begin(), dst.data.end(), uint16_t(0));
    for (int64_t c = 0; c < m; c++)
        for (int64_t g = 0; g < G; g++)
            for (int64_t h = 0; h < w.dim(2); h++) dst(h / width, c / 2, g, h % width, c % 2) = bf16_bits(w(c, g, h));
    return dst;
}

Buffer<> bf16_view(Tensor<uint16_t> &t) {
    std::vector<int> dims(t.shape.rbegin(), t.shape.rend());
    return Buffer<>(BFloat(16), t.data.data(), dims);
}

// ---- Model plugin ----------------------------------------------------------------------------------------
namespace {
class LstmHalide : public LstmModel {
public:
    explicit LstmHalide(const ModelConfig &cfg)
        : LstmModel(cfg), precision_(parse_precision(cfg.precision)), c_(compiled_lstm_step(false, precision_)) {
        check_precision(precision_, get_jit_target_from_environment());
        const int64_t m = cfg.hidden, B = cfg.batch;
        m_pad_ = round_up(m, gemm_tile());
        B_pad_ = round_up(B, gemm_rows());
        proj_ = Tensor<float>({cfg.seq, B_pad_, kLstmGates, m_pad_});
        for (auto *s : {&h_state_[0], &h_state_[1], &c_state_[0], &c_state_[1]}) *s = Tensor<float>({B_pad_, m_pad_});
        for (int64_t l = 0; l < cfg.layers; l++) {
            const LstmParams<float> &p = data_.layers[l];
            Layer layer{pad_last(p.w_input, m_pad_), {}, pad_last(p.bias, m_pad_), Tensor<float>({B_pad_, m_pad_}),
                        Tensor<float>({B_pad_, m_pad_})};
            if (precision_ == Precision::bf16) pack_recurrent_pairs_into(p.w_recurrent, c_.width, m_pad_, layer.w_recurrent_pairs);
            else pack_recurrent_into(p.w_recurrent, c_.width, m_pad_, layer.w_recurrent);
            for (int64_t b = 0; b < B; b++)
                for (int64_t u = 0; u < m; u++) {
                    layer.h0(b, u) = data_.h0(l, b, u);
                    layer.c0(b, u) = data_.c0(l, b, u);
                }
            layers_.push_back(std::move(layer));
        }
        if (cfg.layers > 1) between_[0] = between_[1] = Tensor<float>({cfg.seq, B, m});
    }

    void forward() override {
        const Tensor<float> *input = &data_.x;
        for (int64_t l = 0; l < cfg_.layers; l++) {
            Tensor<float> &output = l == cfg_.layers - 1 ? h_ : between_[l % 2];
            run_layer(l, *input, output);
            input = &output;
        }
    }

private:
    struct Layer {
        Tensor<float> w_input, w_recurrent, bias, h0, c0;  // padded; w_recurrent packed (pack_recurrent_into)
        Tensor<uint16_t> w_recurrent_pairs;                 // bf16: instead of w_recurrent (pack_recurrent_pairs_into)
    };

    // Layer l over input [T][B][n_l] into output [T][B][m]; its final state into h_T_[l], c_T_[l].
    void run_layer(int64_t l, const Tensor<float> &input, Tensor<float> &output) {
        const int64_t T = cfg_.seq, B = cfg_.batch, m = cfg_.hidden, G = kLstmGates;
        Layer &layer = layers_[l];
        Buffer<float> proj_out = view(proj_);
        row_gemm(view(layer.w_input), view(const_cast<Tensor<float> &>(input)), view(layer.bias), proj_out, precision_);

        std::lock_guard<std::mutex> lock(c_.mutex);
        LstmStep &s = c_.step;
        if (precision_ == Precision::bf16) s.w_recurrent_pairs.set(bf16_view(layer.w_recurrent_pairs));
        else s.w_recurrent.set(view(layer.w_recurrent));
        const Tensor<float> *h_prev = &layer.h0, *c_prev = &layer.c0;
        const int mp = static_cast<int>(m_pad_), bp = static_cast<int>(B_pad_);
        for (int64_t t = 0; t < T; t++) {
            Tensor<float> &h_next = h_state_[t % 2], &c_next = c_state_[t % 2];
            s.proj.set(view(&proj_.data[t * B_pad_ * G * m_pad_], {{mp, 1}, {G, mp}, {bp, G * mp}}));
            s.h_prev.set(view(h_prev->data.data(), {{mp, 1}, {bp, mp}}));
            s.c_prev.set(view(c_prev->data.data(), {{mp, 1}, {bp, mp}}));
            Buffer<float> c_out = view(c_next), h_out = view(h_next);
            c_.pipeline.realize(Realization(c_out, h_out));
            for (int64_t b = 0; b < B; b++) std::copy(&h_next(b, 0), &h_next(b, 0) + m, &output(t, b, 0));
            h_prev = &h_next;
            c_prev = &c_next;
        }
        for (int64_t b = 0; b < B; b++) {
            std::copy(&(*h_prev)(b, 0), &(*h_prev)(b, 0) + m, &h_T_(l, b, 0));
            std::copy(&(*c_prev)(b, 0), &(*c_prev)(b, 0) + m, &c_T_(l, b, 0));
        }
    }

    Precision precision_;
    CompiledLstmStep &c_;
    int64_t m_pad_, B_pad_;
    std::vector<Layer> layers_;
    Tensor<float> proj_, between_[2];  // projections of one layer; outputs of the layers before the last
    Tensor<float> h_state_[2], c_state_[2];
};

const bool lstm_halide_registered = [] {
    register_lstm_model("lstm-halide", "LSTM in Halide: input GEMM over all steps + serial recurrent steps", {"cpu"},
                        nullptr, [](const ModelConfig &cfg) { return std::make_unique<LstmHalide>(cfg); },
                        make_lstm_halide_layer, LstmBf16{});
    return true;
}();
}  // namespace
}  // namespace qrnn
