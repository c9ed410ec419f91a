#include "bench/bench_attention.h"

#include <cmath>

#include "runtime/compiled_attention.h"
#include "bench/bench_operands.h"
#include "bench/onednn_row_ops.h"
#include "bench/sgemm_references.h"

namespace qrnn::bench {

struct AttentionGemms::State {
    int64_t T, S, B, m;
    Halide::Target target;
    std::shared_ptr<CompiledAttention> attention;
    std::vector<int64_t> lengths;
    Tensor<float> cell, gate_o, enc, weights, out, dout;
    AttentionTape tape;
    AttentionGradsF grads;
    // Reference operands, per GEMM (bench_attention.h), the per-b ones stacked over b; a C per GEMM.
    std::vector<float> c_b, enc_t_b, enc_b, alpha_b, kc, w_kc, dmixed, w_t, kc_t, dk_b, dscore_b, ads_b, dkc_b;
    std::vector<std::vector<float>> C;
    // The passes that are not GEMMs: oneDNN's primitives, their operands and outputs.
    std::vector<OnednnSoftmax> softmax;  // per pass reference
    std::vector<OnednnProduct> product;
    std::vector<float> ref_alpha, ref_out, ref_dmixed, ref_dgate_o, ref_dscore;
};

AttentionGemms::AttentionGemms(int64_t T, int64_t S, int64_t B, int64_t m, const Halide::Target &target)
    : s_(std::make_shared<State>()) {
    State &s = *s_;
    s.T = T, s.S = S, s.B = B, s.m = m, s.target = target;
    s.attention = compiled_attention(target);
    s.lengths.assign(B, S);
    s.cell = s.gate_o = s.out = s.dout = Tensor<float>({T, B, m});
    s.enc = Tensor<float>({S, B, m});
    s.weights = Tensor<float>({2, m, m});
    fill_range(s.cell.data, 13, 1, 1.0f), fill_range(s.gate_o.data, 13, 2, 1.0f), fill_range(s.enc.data, 13, 3, 1.0f);
    fill_range(s.weights.data, 13, 4, 0.1f), fill_range(s.dout.data, 13, 5, 1.0f);
    run_forward();

    auto per_b = [&](int64_t rows, int64_t cols) { return std::vector<float>(B * rows * cols); };
    s.c_b = per_b(T, m), s.enc_t_b = per_b(m, S), s.enc_b = per_b(S, m), s.dk_b = per_b(T, m);
    s.alpha_b.assign(s.tape.alpha.data.begin(), s.tape.alpha.data.end());
    s.dscore_b = per_b(T, S), s.ads_b = per_b(S, 2 * T), s.dkc_b = per_b(2 * T, m);
    fill_range(s.dk_b, 13, 6, 1.0f), fill_range(s.dscore_b, 13, 7, 1e-2f);
    for (int64_t b = 0; b < B; b++) {
        for (int64_t t = 0; t < T; t++)
            for (int64_t h = 0; h < m; h++) {
                s.c_b[(b * T + t) * m + h] = s.cell(t, b, h);
                s.dkc_b[(b * 2 * T + t) * m + h] = s.dk_b[(b * T + t) * m + h];
                s.dkc_b[(b * 2 * T + T + t) * m + h] = s.cell(t, b, h);
            }
        for (int64_t e = 0; e < S; e++) {
            for (int64_t h = 0; h < m; h++) {
                s.enc_b[(b * S + e) * m + h] = s.enc(e, b, h);
                s.enc_t_b[(b * m + h) * S + e] = s.enc(e, b, h);
            }
            for (int64_t t = 0; t < T; t++) {
                s.ads_b[(b * S + e) * 2 * T + t] = s.alpha_b[(b * T + t) * S + e];
                s.ads_b[(b * S + e) * 2 * T + T + t] = s.dscore_b[(b * T + t) * S + e];
            }
        }
    }
    const int64_t N = T * B;
    s.kc.resize(N * 2 * m), s.kc_t.resize(N * 2 * m), s.dmixed.resize(N * m), s.w_t.resize(2 * m * m);
    fill_range(s.dmixed, 13, 8, 1.0f);
    for (int64_t r = 0; r < N; r++)
        for (int64_t h = 0; h < m; h++) {
            s.kc[r * 2 * m + h] = s.tape.context.data[r * m + h];
            s.kc[r * 2 * m + m + h] = s.cell.data[r * m + h];
            s.kc_t[h * N + r] = s.tape.context.data[r * m + h];
            s.kc_t[(m + h) * N + r] = s.cell.data[r * m + h];
        }
    s.w_kc.assign(s.weights.data.begin(), s.weights.data.end());  // [i][c][h]: [2m][m], row c of W_k then of W_c
    for (int64_t i = 0; i < 2; i++)
        for (int64_t c = 0; c < m; c++)
            for (int64_t h = 0; h < m; h++) s.w_t[h * 2 * m + i * m + c] = s.weights(i, c, h);
    s.C.assign(kGemms, std::vector<float>(std::max({B * T * S, N * 2 * m, B * S * m, 2 * m * m})));

    for (bool calling_thread : {false, true})
        s.softmax.emplace_back(B * T, S, calling_thread), s.product.emplace_back(N * m, calling_thread);
    s.ref_alpha = s.ref_dscore = per_b(T, S);
    s.ref_out = s.ref_dmixed = s.ref_dgate_o = std::vector<float>(N * m);
}

void AttentionGemms::run_forward() {
    State &s = *s_;
    s.attention->forward(s.cell, s.gate_o, s.enc, s.lengths, s.weights, s.out, s.tape);
}

void AttentionGemms::run_backward() {
    State &s = *s_;
    s.attention->backward(s.cell, s.gate_o, s.enc, s.lengths, s.weights, s.tape, s.dout, s.grads);
}

void AttentionGemms::run_reference(size_t i, int g) {
    State &s = *s_;
    const Sgemm &sgemm = sgemm_references(s.target).at(i).run;
    const int64_t T = s.T, S = s.S, B = s.B, m = s.m, N = T * B;
    float *C = s.C[g].data();
    auto batched = [&](int M, int Nc, int K, const std::vector<float> &a, const std::vector<float> &b) {
        for (int64_t q = 0; q < B; q++) sgemm(M, Nc, K, &a[q * M * K], &b[q * K * Nc], &C[q * M * Nc]);
    };
    switch (g) {
        case 0: batched(I(T), I(S), I(m), s.c_b, s.enc_t_b); break;
        case 1: batched(I(T), I(m), I(S), s.alpha_b, s.enc_b); break;
        case 2: sgemm(I(N), I(m), I(2 * m), s.kc.data(), s.w_kc.data(), C); break;
        case 3: sgemm(I(N), I(2 * m), I(m), s.dmixed.data(), s.w_t.data(), C); break;
        case 4: sgemm(I(2 * m), I(m), I(N), s.kc_t.data(), s.dmixed.data(), C); break;
        case 5: batched(I(T), I(S), I(m), s.dk_b, s.enc_t_b); break;
        case 6: batched(I(T), I(m), I(S), s.dscore_b, s.enc_b); break;
        default: batched(I(S), I(m), I(2 * T), s.ads_b, s.dkc_b); break;
    }
}

const std::vector<std::string> &AttentionGemms::pass_references() {
    static const std::vector<std::string> names{"dnnl", "dnnl-1t"};
    return names;
}

void AttentionGemms::run_reference_pass(size_t i, int p) {
    State &s = *s_;
    OnednnSoftmax &softmax = s.softmax.at(i);
    OnednnProduct &product = s.product.at(i);
    const float *o = s.gate_o.data.data(), *mixed = s.tape.mixed.data.data(), *dout = s.dout.data.data();
    switch (p) {
        case 0: softmax.forward(s.C[0].data(), s.ref_alpha.data()); break;
        case 1: product.run(o, mixed, s.ref_out.data()); break;
        case 2: product.run(dout, o, s.ref_dmixed.data()), product.run(dout, mixed, s.ref_dgate_o.data()); break;
        default: softmax.backward(s.ref_alpha.data(), s.C[5].data(), s.ref_dscore.data()); break;
    }
}

double AttentionGemms::passes_abs_diff(size_t i) {
    State &s = *s_;
    run_reference(0, 0), run_reference(0, 5);  // the scores and dalpha the passes read
    for (int p = 0; p < kPasses; p++) run_reference_pass(i, p);
    double worst = 0;
    auto check = [&](double want, float got) { worst = std::max(worst, std::abs(want - got)); };
    const int64_t S = s.S;
    for (int64_t r = 0; r < s.B * s.T; r++) {
        const float *x = &s.C[0][r * S], *y = &s.ref_alpha[r * S], *dy = &s.C[5][r * S];
        double mx = -INFINITY, sum = 0, dot = 0;
        for (int64_t e = 0; e < S; e++) mx = std::max(mx, static_cast<double>(x[e]));
        for (int64_t e = 0; e < S; e++) sum += std::exp(x[e] - mx);
        for (int64_t e = 0; e < S; e++) check(std::exp(x[e] - mx) / sum, y[e]), dot += double(y[e]) * dy[e];
        for (int64_t e = 0; e < S; e++) check(y[e] * (dy[e] - dot), s.ref_dscore[r * S + e]);
    }
    for (size_t k = 0; k < s.ref_out.size(); k++) {
        const double o = s.gate_o.data[k], mixed = s.tape.mixed.data[k], dout = s.dout.data[k];
        check(o * mixed, s.ref_out[k]), check(dout * o, s.ref_dmixed[k]), check(dout * mixed, s.ref_dgate_o[k]);
    }
    return worst;
}

void AttentionGemms::run_reference_chain(bool forward, const std::vector<size_t> &gemm_refs,
                                         const std::vector<size_t> &pass_refs) {
    // Steps in order: GEMM g >= 0, pass p as -1 - p.
    static const std::vector<int> forward_steps{0, -1, 1, 2, -2}, backward_steps{-3, 3, 4, 5, -4, 6, 7};
    const int first_gemm = forward ? 0 : kForwardGemms, first_pass = forward ? 0 : kForwardPasses;
    for (int step : forward ? forward_steps : backward_steps) {
        if (step >= 0)
            run_reference(gemm_refs.at(step - first_gemm), step);
        else
            run_reference_pass(pass_refs.at(-1 - step - first_pass), -1 - step);
    }
}

double AttentionGemms::gemm_flops(int g) const {
    const double T = s_->T, S = s_->S, B = s_->B, m = s_->m;
    if (g == 2 || g == 3 || g == 4) return 4.0 * T * B * m * m;
    if (g == 7) return 4.0 * B * S * T * m;
    return 2.0 * B * T * S * m;
}

double AttentionGemms::alpha_abs_diff(size_t i) {
    State &s = *s_;
    run_forward();
    run_reference(i, 0);
    double worst = 0;
    for (int64_t r = 0; r < s.B * s.T; r++) {
        const float *score = &s.C[0][r * s.S];
        double mx = -INFINITY, sum = 0;
        for (int64_t e = 0; e < s.S; e++) mx = std::max(mx, static_cast<double>(score[e]));
        for (int64_t e = 0; e < s.S; e++) sum += std::exp(score[e] - mx);
        for (int64_t e = 0; e < s.S; e++)
            worst = std::max(worst, std::abs(std::exp(score[e] - mx) / sum - s.tape.alpha.data[r * s.S + e]));
    }
    return worst;
}

std::string AttentionGemms::shape() const {
    return "T=" + std::to_string(s_->T) + " S=" + std::to_string(s_->S) + " B=" + std::to_string(s_->B) +
           " m=" + std::to_string(s_->m);
}

}  // namespace qrnn::bench
