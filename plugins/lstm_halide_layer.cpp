// Trainable layer "lstm-halide" (nn::Layer), forward and a hand-written backward in Halide (Halide 14's
// autodiff is wrong for scans). Forward: row_gemm projection over all steps, then the step of
// plugins/lstm_halide.h saving the activated gates; the tape keeps them with every h_t and c_t. Backward:
//   a reverse-time loop of one pipeline per step (below): dh_t = dy_t + R^T dpre_{t+1}, the cell and gate
//       derivatives, dpre_t = d(pre-activations), dc_{t-1} = dc_t * f_t;
//   then, over all steps at once, GEMMs of plugins/halide_gemms.h: dx = dpre W^T (row_gemm),
//       dW = x^T dpre and dbias (weight_grad, with a column of ones), dR = h_{t-1}^T dpre (weight_grad),
//       and dh_0 = R^T dpre_0 (row_gemm).
// Buffers are padded as the forward's: m to gemm_tile(), B to gemm_rows(); padded rows and columns carry
// zero gradients.
#include "core/activations.h"
#include "core/error.h"
#include "plugins/lstm_halide.h"
#include "plugins/lstm_layer.h"
#include "plugins/lstm_model.h"
#include "runtime/compiled_layer.h"
#include "runtime/kernel.h"
#include "schedules/gemm_core.h"

namespace qrnn {
namespace {
using namespace Halide;

// ---- Algorithm: one backward step ------------------------------------------------------------------------
struct LstmStepBack {
    ImageParam gates{Float(32), 3, "gates_t"};      // (h, g, b): activated i, f, g, o of step t
    ImageParam c_t{Float(32), 2, "c_t"};            // (h, b)
    ImageParam c_prev{Float(32), 2, "c_prev"};      // (h, b): c_{t-1}
    ImageParam dy{Float(32), 2, "dy_t"};            // (h, b): unpadded, zero outside
    ImageParam dh_in{Float(32), 2, "dh_in"};        // (h, b): d h_T at the last step, else zeros
    ImageParam dc_in{Float(32), 2, "dc_in"};        // (h, b): d c_t from the steps after t
    ImageParam w_rt{Float(32), 3, "w_rt"};          // (ji, r, jo): R transposed, r = g * m_pad + u, in panels of j
    // bf16: (ri, ji, rp, jo), r = 2 rp + ri: R transposed in panels of j, rounded, pairs of r side by side.
    ImageParam w_rt_pairs{BFloat(16), 4, "w_rt_pairs"};
    ImageParam dpre_next{Float(32), 2, "dpre_next"};  // (r, b): dpre_{t+1}
    Var h{"h"}, b{"b"};
    RDom r;                                 // r; bf16: (ri, rp)
    Func dpre_rounded{"dpre_next_rounded"};  // bf16: (r, b) dpre_{t+1} as the GEMM's operand
    Func dh_rec{"dh_rec"};  // (h, b): dh_in + R^T dpre_{t+1}
    Func grads{"grads"};    // (h, b) -> {dpre_i, dpre_f, dpre_g, dpre_o, dc_{t-1}}
    Precision precision;

    // width: of w_rt's panels (gemm_tile()).
    LstmStepBack(int width, Precision p) : precision(p) {
        dh_rec(h, b) = dh_in(h, b);
        if (p == Precision::bf16) {  // pairs of r, the dot product's layout (G m_pad is even)
            Var rr("rr");
            dpre_rounded(rr, b) = cast(BFloat(16), dpre_next(rr, b));
            r = RDom(0, 2, 0, dpre_next.dim(0).extent() / 2, "back_r");
            dh_rec(h, b) += cast<float>(w_rt_pairs(r.x, h % width, r.y, h / width)) * cast<float>(dpre_rounded(2 * r.y + r.x, b));
        } else {
            r = RDom(0, dpre_next.dim(0).extent(), "back_r");
            dh_rec(h, b) += w_rt(h % width, r, h / width) * dpre_next(r, b);
        }
        Expr dh = BoundaryConditions::constant_exterior(dy, 0.0f)(h, b) + dh_rec(h, b);
        Expr i = gates(h, kGateI, b), f = gates(h, kGateF, b), g = gates(h, kGateG, b), o = gates(h, kGateO, b);
        Expr tc = tanh_activation(c_t(h, b));
        Expr dc = dc_in(h, b) + dh * o * (1 - tc * tc);
        grads(h, b) = Tuple(dc * g * i * (1 - i), dc * c_prev(h, b) * f * (1 - f), dc * i * (1 - g * g),
                            dh * tc * o * (1 - o), dc * f);
    }
};

// ---- CPU schedule ----------------------------------------------------------------------------------------
// The GEMM register tile (gemm_tile() of h x gemm_rows() batch rows) of dh accumulators for R^T dpre, parallel
// over tiles; h from 0 in whole tiles (the buffers are padded), so that a tile's rows are one panel of w_rt (packed:
// its unpacked rows, m_pad floats apart, alias in the caches). Not on the GEMM core: in place (padded) there, with the
// register tile's loops the same, the AVX2 target's training step took 1.05-1.13x the time at B=16 m=320 (the core's
// column blocks; a task per tile, as here, matched it, but as the core's rule it cost the forward step 1.17x).
// bf16: on the GEMM core in place (padded), as the forward step in bf16 (plugins/lstm_halide.cpp), so that the pair
// runs on the dot product where the target has it: w_rt_pairs in panels of one vector and tiles of one vector x
// gemm_rows() (panels of 2 vectors compiled the second vector of a tile to per-lane inserts, docs/precision.md).
int step_back_width(Precision precision, const Target &target) {
    const int vec = target.natural_vector_size<float>();
    return precision == Precision::bf16 ? vec : gemm_tile_for(target).h_vectors * vec;
}

void schedule_bf16_step_back(LstmStepBack &s, const Target &target) {
    const int vec = target.natural_vector_size<float>();
    s.grads.output_buffers()[0].dim(0).set_min(0);
    s.dpre_rounded.compute_root().vectorize(s.dpre_rounded.args()[0], vec, TailStrategy::RoundUp);
    const OutputImageParam out = s.grads.output_buffers()[0];
    GemmDims dims{s.dh_rec, s.h, s.b, {}, {}, {s.r.x, s.r.y}, out.dim(1).extent(), 1, 2 * s.r.y.extent()};
    dims.pairs = true, dims.operand_bytes = 2;
    dims.in_place = true;
    dims.padded = true;
    // Tiles within the callers' padding (m to gemm_tile(), B to gemm_rows()): a tile's rows are one panel of w_rt_pairs.
    schedule_gemm(s.grads, dims, out.dim(0).extent(), gemm_blocking(target, GemmTile{1, gemm_tile_for(target).t}));
}

void schedule_step_back(LstmStepBack &s, const Target &target) {
    if (s.precision == Precision::bf16) return schedule_bf16_step_back(s, target);
    const int vec = target.natural_vector_size<float>(), width = step_back_width(s.precision, target);
    Var ho("ho"), hi("hi"), bo("bo"), bi("bi"), tile("tile");
    s.grads.output_buffers()[0].dim(0).set_min(0);
    s.grads.tile(s.h, s.b, ho, bo, hi, bi, width, gemm_tile_for(target).t, TailStrategy::RoundUp)
        .reorder(hi, bi, bo, ho)
        .vectorize(hi, vec)
        .fuse(ho, bo, tile)
        .parallel(tile);
    s.dh_rec.compute_at(s.grads, tile).vectorize(s.h, vec).unroll(s.h).unroll(s.b);
    s.dh_rec.update().reorder(s.h, s.b, s.r.x).vectorize(s.h, vec).unroll(s.h).unroll(s.b);
}

struct CompiledStepBack {
    Target target = get_jit_target_from_environment();
    int width;  // of w_rt's (w_rt_pairs') panels
    LstmStepBack s;
    Kernel pipeline;
    std::mutex mutex;
    explicit CompiledStepBack(Precision precision) : width(step_back_width(precision, target)), s(width, precision) {
        schedule_step_back(s, target);
        pipeline = Pipeline(s.grads);
        compile_kernels({&pipeline}, target);
    }
};
CompiledStepBack &compiled_step_back(Precision precision) {
    // The environment's target is fixed for the process: each precision looked up (and compiled) once, when first
    // asked for, then a reference into the cache.
    return environment_variant<CompiledStepBack, 2>(precision == Precision::bf16, std::string("|") + precision_name(precision),
                                                    [&] { return std::make_shared<CompiledStepBack>(precision); });
}

// ---- Layer -----------------------------------------------------------------------------------------------
struct HalideTape : nn::Tape {
    int64_t T = 0, B = 0;
    Tensor<float> x;         // [T][B][n]
    Tensor<float> gates;     // [T][B_pad][4][m_pad] activated
    Tensor<float> h, c;      // [T+1][B_pad][m_pad]: row 0 the initial state, row t+1 after step t
};

// Rows [0, rows) and columns [0, cols) of a row-major [..][width] tensor region -> dst, or the reverse.
void copy_block(const float *src, int64_t src_width, float *dst, int64_t dst_width, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; r++) std::copy(src + r * src_width, src + r * src_width + cols, dst + r * dst_width);
}
void add_block(const float *src, int64_t src_width, float *dst, int64_t dst_width, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) dst[r * dst_width + c] += src[r * src_width + c];
}

class LstmHalideLayer : public LstmLayer {
public:
    LstmHalideLayer(const ModelConfig &cfg, int64_t index)
        : LstmLayer("lstm-halide", lstm_options(cfg), index), precision_(parse_precision(cfg.precision)),
          mp_(round_up(m_, gemm_tile())) {
        check_precision(precision_, get_jit_target_from_environment());
    }

    std::unique_ptr<nn::Tape> make_tape() const override { return std::make_unique<HalideTape>(); }

    void forward(const Tensor<float> &x, nn::State &state, Tensor<float> &y, nn::Tape *tape_base) override {
        check_forward(x, state);
        HalideTape &tape = tape_base ? dynamic_cast<HalideTape &>(*tape_base) : s_.untaped;
        const int64_t T = x.dim(0), B = x.dim(1), Bp = round_up(B, gemm_rows()), G = kLstmGates;
        const int mp = static_cast<int>(mp_), bp = static_cast<int>(Bp);
        tape.T = T, tape.B = B, tape.x = x;
        for (auto [t, dims] : {std::pair{&tape.gates, std::vector<int64_t>{T, Bp, G, mp_}},
                               std::pair{&tape.h, std::vector<int64_t>{T + 1, Bp, mp_}},
                               std::pair{&tape.c, std::vector<int64_t>{T + 1, Bp, mp_}}})
            ensure_shape(*t, dims);
        copy_block(state.at("h").data.data(), m_, tape.h.data.data(), mp_, B, m_);
        copy_block(state.at("c").data.data(), m_, tape.c.data.data(), mp_, B, m_);

        Tensor<float> &w_input = pad_last_into(value_.w_input, mp_, s_.w_input);
        CompiledLstmStep &c = compiled_lstm_step(true, precision_);
        Tensor<float> &bias = pad_last_into(value_.bias, mp_, s_.bias), &proj = ensure_shape(s_.proj, {T, Bp, G, mp_});
        Buffer<float> proj_out = view(proj);
        row_gemm(view(w_input), view(tape.x), view(bias), proj_out, precision_);

        std::lock_guard<std::mutex> lock(c.mutex);
        LstmStep &s = c.step;
        if (precision_ == Precision::bf16)
            s.w_recurrent_pairs.set(bf16_view(pack_recurrent_pairs_into(value_.w_recurrent, c.width, mp_, s_.w_recurrent_pairs)));
        else
            s.w_recurrent.set(view(pack_recurrent_into(value_.w_recurrent, c.width, mp_, s_.w_recurrent)));
        const size_t row = Bp * mp_;
        for (int64_t t = 0; t < T; t++) {
            s.proj.set(view(&proj.data[t * G * row], {{mp, 1}, {G, mp}, {bp, G * mp}}));
            s.h_prev.set(view(&tape.h.data[t * row], {{mp, 1}, {bp, mp}}));
            s.c_prev.set(view(&tape.c.data[t * row], {{mp, 1}, {bp, mp}}));
            std::vector<Buffer<void>> outs{view(&tape.c.data[(t + 1) * row], {{mp, 1}, {bp, mp}}),
                                            view(&tape.h.data[(t + 1) * row], {{mp, 1}, {bp, mp}})};
            for (int g = 0; g < G; g++)
                outs.push_back(view(&tape.gates.data[t * G * row + g * mp_], {{mp, 1}, {bp, G * mp}}));
            c.pipeline.realize(Realization(outs));
        }
        ensure_shape(y, {T, B, m_});
        for (int64_t t = 0; t < T; t++) copy_block(&tape.h.data[(t + 1) * row], mp_, &y(t, 0, 0), m_, B, m_);
        copy_block(&tape.h.data[T * row], mp_, state.at("h").data.data(), m_, B, m_);
        copy_block(&tape.c.data[T * row], mp_, state.at("c").data.data(), m_, B, m_);
        state.time += T;
    }

    void backward(const nn::Tape &tape_base, const Tensor<float> &dy, const nn::State *d_final, Tensor<float> *dx,
                  nn::State *d_initial) override {
        const auto &tape = dynamic_cast<const HalideTape &>(tape_base);
        if (tape.T == 0) fail("lstm-halide: backward needs the tape of a forward pass");
        const int64_t T = tape.T, B = tape.B;
        check_backward(T, B, dy, d_final);
        // R^T in f32: the f32 step back's operand and dh0's (bf16's step back reads its own pairs of R^T).
        Tensor<float> *w_rt = precision_ == Precision::f32 || d_initial ? &transposed_recurrent() : nullptr;
        steps_back(tape, dy, d_final, w_rt);
        const int bp = static_cast<int>(round_up(B, gemm_rows())), Gm = static_cast<int>(kLstmGates * mp_);
        const Buffer<float> dpre_steps = view(s_.dpre.data.data(), {{Gm, 1}, {bp, Gm}, {static_cast<int>(T), bp * Gm}});
        input_grad(dpre_steps, T, B, dx);
        weight_grads(tape, dpre_steps);
        if (d_initial) initial_grads(*w_rt, B, *d_initial);
    }

private:
    // R transposed in panels of j: w_rt[j / W][g * m_pad + u][j % W] = R[j][g][u], zero padded (W = gemm_tile()).
    Tensor<float> &transposed_recurrent() {
        const int64_t W = gemm_tile(), G = kLstmGates;
        Tensor<float> &w_rt = ensure_shape(s_.w_rt, {mp_ / W, G * mp_, W});
        std::fill(w_rt.data.begin(), w_rt.data.end(), 0.0f);
        for (int64_t j = 0; j < m_; j++)
            for (int64_t g = 0; g < G; g++)
                for (int64_t u = 0; u < m_; u++) w_rt(j / W, g * mp_ + u, j % W) = value_.w_recurrent(j, g, u);
        return w_rt;
    }
    // bf16: R transposed and rounded in panels of `width` j, pairs of r = g * m_pad + u side by side:
    // [j / width][r / 2][j % width][r % 2] = R[j][g][u], zero padded (the step back's w_rt_pairs).
    Tensor<uint16_t> &transposed_recurrent_pairs(int64_t width) {
        const int64_t G = kLstmGates;
        Tensor<uint16_t> &pairs = ensure_shape(s_.w_rt_pairs, {mp_ / width, G * mp_ / 2, width, 2});
        std::fill(pairs.data.begin(), pairs.data.end(), uint16_t(0));
        for (int64_t j = 0; j < m_; j++)
            for (int64_t g = 0; g < G; g++)
                for (int64_t u = 0; u < m_; u++) {
                    const int64_t r = g * mp_ + u;
                    pairs(j / width, r / 2, j % width, r % 2) = bf16_bits(value_.w_recurrent(j, g, u));
                }
        return pairs;
    }

    // The steps backwards in time: dpre [T+1][B_pad][4][m_pad] (row T zeros: no step after the last) and the
    // carry d c into s_.dc[0] at the end; dh_in and the carries are [B_pad][m_pad]. w_rt: R^T (f32; unused in bf16).
    void steps_back(const HalideTape &tape, const Tensor<float> &dy, const nn::State *d_final, Tensor<float> *w_rt) {
        const int64_t T = tape.T, B = tape.B, Bp = round_up(B, gemm_rows()), G = kLstmGates, m = m_;
        const int mp = static_cast<int>(mp_), bp = static_cast<int>(Bp), Gm = static_cast<int>(G * mp_);
        const size_t row = Bp * mp_;
        Tensor<float> &dpre = ensure_shape(s_.dpre, {T + 1, Bp, G, mp_}), zeros({Bp, mp_}), dh_last({Bp, mp_});
        Tensor<float> *dc = s_.dc;
        for (Tensor<float> *t : {&dc[0], &dc[1]}) {
            ensure_shape(*t, {Bp, mp_});
            std::fill(t->data.begin(), t->data.end(), 0.0f);  // the carry into the last step: zeros or d c_T
        }
        if (d_final) {
            copy_block(d_final->at("h").data.data(), m, dh_last.data.data(), mp_, B, m);
            copy_block(d_final->at("c").data.data(), m, dc[T % 2].data.data(), mp_, B, m);
        }
        CompiledStepBack &c = compiled_step_back(precision_);
        std::lock_guard<std::mutex> lock(c.mutex);
        LstmStepBack &s = c.s;
        if (precision_ == Precision::bf16) s.w_rt_pairs.set(bf16_view(transposed_recurrent_pairs(c.width)));
        else s.w_rt.set(view(*w_rt));
        for (int64_t t = T - 1; t >= 0; t--) {
            s.gates.set(view(&tape.gates.data[t * G * row], {{mp, 1}, {G, mp}, {bp, Gm}}));
            s.c_t.set(view(&tape.c.data[(t + 1) * row], {{mp, 1}, {bp, mp}}));
            s.c_prev.set(view(&tape.c.data[t * row], {{mp, 1}, {bp, mp}}));
            s.dy.set(view(&dy(t, 0, 0), {{static_cast<int>(m), 1}, {static_cast<int>(B), static_cast<int>(m)}}));
            s.dh_in.set(view(t == T - 1 ? dh_last : zeros));
            s.dc_in.set(view(dc[(t + 1) % 2]));
            s.dpre_next.set(view(&dpre.data[(t + 1) * G * row], {{Gm, 1}, {bp, Gm}}));
            std::vector<Buffer<void>> outs;
            for (int g = 0; g < G; g++) outs.push_back(view(&dpre.data[t * G * row + g * mp_], {{mp, 1}, {bp, Gm}}));
            outs.push_back(view(dc[t % 2]));
            c.pipeline.realize(Realization(outs));
        }
    }

    // dx = dpre W^T: row_gemm with w = W transposed [4 m_pad][1][n_pad].
    void input_grad(const Buffer<float> &dpre_steps, int64_t T, int64_t B, Tensor<float> *dx) {
        const int64_t n = n_, m = m_, G = kLstmGates, np = round_up(n, gemm_tile()), Bp = round_up(B, gemm_rows());
        Tensor<float> &w_t = ensure_shape(s_.w_t, {G * mp_, 1, np}), no_bias({1, np});
        Tensor<float> &dx_pad = ensure_shape(s_.dx_pad, {T, Bp, 1, np});
        for (int64_t c = 0; c < n; c++)
            for (int64_t g = 0; g < G; g++)
                for (int64_t u = 0; u < m; u++) w_t(g * mp_ + u, 0, c) = value_.w_input(c, g, u);
        Buffer<float> dx_out = view(dx_pad);
        row_gemm(view(w_t), dpre_steps, view(no_bias), dx_out, precision_);
        if (!dx) return;
        ensure_shape(*dx, {T, B, n});
        for (int64_t t = 0; t < T; t++) copy_block(&dx_pad(t, 0, 0, 0), np, &(*dx)(t, 0, 0), n, B, n);
    }

    // d w_input and d bias: weight_grad with a = x and a column of ones (its row of the result is d bias);
    // d w_recurrent = h_{t-1}^T dpre: a = the tape's h rows 0..T-1. Added to the gradients.
    void weight_grads(const HalideTape &tape, const Buffer<float> &dpre_steps) {
        const int64_t T = tape.T, B = tape.B, Bp = round_up(B, gemm_rows()), G = kLstmGates, n = n_, m = m_;
        const int mp = static_cast<int>(mp_), bp = static_cast<int>(Bp);
        const int64_t ce = round_up(n + 1, gemm_rows());
        Tensor<float> &x_ext = ensure_shape(s_.x_ext, {T, Bp, ce}), &dw = ensure_shape(s_.dw, {ce, G * mp_});
        for (int64_t t = 0; t < T; t++)
            for (int64_t b = 0; b < B; b++) {
                std::copy(&tape.x(t, b, 0), &tape.x(t, b, 0) + n, &x_ext(t, b, 0));
                x_ext(t, b, n) = 1.0f;
            }
        Buffer<float> dw_out = view(dw);
        weight_grad(dpre_steps, view(x_ext), dw_out, precision_);
        for (int64_t g = 0; g < G; g++) {
            add_block(&dw(0, g * mp_), G * mp_, &grad_.w_input(0, g, 0), G * m, n, m);
            add_block(&dw(n, g * mp_), G * mp_, &grad_.bias(g, 0), m, 1, m);
        }
        Tensor<float> &dr = ensure_shape(s_.dr, {round_up(mp_, gemm_rows()), G * mp_});
        Buffer<float> dr_out = view(dr);
        weight_grad(dpre_steps, view(tape.h.data.data(), {{mp, 1}, {bp, mp}, {static_cast<int>(T), bp * mp}}), dr_out, precision_);
        for (int64_t g = 0; g < G; g++) add_block(&dr(0, g * mp_), G * mp_, &grad_.w_recurrent(0, g, 0), G * m, m, m);
    }

    // d h_0 = R^T dpre_0: row_gemm with w = w_rt's panels as (ji, jo, r), h = ji and the "gates" jo, into dh0
    // [B_pad][m_pad] seen as (ji, jo, b, 1); d c_0 the last carry.
    void initial_grads(const Tensor<float> &w_rt, int64_t B, nn::State &d_initial) {
        const int64_t W = gemm_tile(), Bp = round_up(B, gemm_rows()), m = m_;
        const int w = static_cast<int>(W), panels = static_cast<int>(mp_ / W), mp = static_cast<int>(mp_);
        const int bp = static_cast<int>(Bp), Gm = static_cast<int>(kLstmGates * mp_);
        Tensor<float> dh0({Bp, mp_}), no_bias_m({panels, W});
        Buffer<float> dh0_out = view(dh0.data.data(), {{w, 1}, {panels, w}, {bp, mp}, {1, bp * mp}});
        row_gemm(view(w_rt.data.data(), {{w, 1}, {panels, Gm * w}, {Gm, w}}),
                 view(s_.dpre.data.data(), {{Gm, 1}, {bp, Gm}, {1, bp * Gm}}), view(no_bias_m), dh0_out, precision_);
        for (const char *name : {"h", "c"}) ensure_shape(d_initial.at(name), {B, m});
        copy_block(dh0.data.data(), mp_, d_initial.at("h").data.data(), m, B, m);
        copy_block(s_.dc[0].data.data(), mp_, d_initial.at("c").data.data(), m, B, m);
    }

    Precision precision_;  // of the GEMMs' operands, forward and backward (f32 or bf16)
    int64_t mp_;           // m padded
    // Scratch reused from call to call (reallocated when the shape changes; padding stays zero): fresh
    // allocations cost page faults, expensive in a VM (a 15 MB tape took 56 ms here).
    struct Scratch {
        HalideTape untaped;  // the forward's buffers when no tape is recorded
        Tensor<float> w_input, w_recurrent, bias, proj, w_rt, dpre, dc[2], w_t, dx_pad, x_ext, dw, dr;
        Tensor<uint16_t> w_recurrent_pairs, w_rt_pairs;  // bf16's
    } s_;
};

}  // namespace

Pipeline lstm_step_back_pipeline(Precision precision, const Target &target) {
    LstmStepBack s(step_back_width(precision, target), precision);
    schedule_step_back(s, target);
    return Pipeline(s.grads);  // Halide's handles keep the Funcs and ImageParams alive
}

std::unique_ptr<nn::Layer> make_lstm_halide_layer(const ModelConfig &cfg, int64_t index) {
    require_environment_target("lstm-halide", cfg.target);
    return std::make_unique<LstmHalideLayer>(cfg, index);
}
}  // namespace qrnn
