#include "bench/bench_decoder.h"

#include <cmath>

#include "lm/softmax_decoder.h"
#include "bench/bench_operands.h"
#include "bench/sgemm_references.h"

namespace qrnn::bench {

struct DecoderGemms::State {
    int64_t N, m, V;
    Halide::Target target;
    std::unique_ptr<lm::SoftmaxDecoder> decoder;
    Tensor<float> h, weights, bias, dh;
    lm::DecoderGrads grads;
    std::vector<int32_t> targets;
    // Reference operands: weights^T [m][V], dlogits [N][V] and its transpose [V][N]; outputs.
    std::vector<float> weights_t, dlogits, dlogits_t, logits, dh_ref, dw_ref;
};

DecoderGemms::DecoderGemms(int64_t rows, int64_t hidden, int64_t vocab, const Halide::Target &target,
                           Precision precision)
    : s_(std::make_shared<State>()) {
    State &s = *s_;
    s.N = rows, s.m = hidden, s.V = vocab, s.target = target;
    s.decoder = std::make_unique<lm::SoftmaxDecoder>(vocab, hidden, target, precision);
    s.h = Tensor<float>({rows, hidden});
    s.weights = Tensor<float>({vocab, hidden});
    s.bias = Tensor<float>({vocab});
    fill_range(s.h.data, 11, 1, 1.0f);
    fill_range(s.weights.data, 11, 2, 0.1f);
    fill_range(s.bias.data, 11, 3, 0.1f);
    s.targets.resize(rows);
    for (int64_t i = 0; i < rows; i++) s.targets[i] = static_cast<int32_t>((i * 7919) % vocab);
    s.weights_t.resize(hidden * vocab);
    for (int64_t v = 0; v < vocab; v++)
        for (int64_t k = 0; k < hidden; k++) s.weights_t[k * vocab + v] = s.weights(v, k);
    Tensor<float> dl({rows, vocab});
    fill_range(dl.data, 11, 4, 1e-3f);
    s.dlogits.assign(dl.data.begin(), dl.data.end());
    s.dlogits_t.resize(rows * vocab);
    for (int64_t n = 0; n < rows; n++)
        for (int64_t v = 0; v < vocab; v++) s.dlogits_t[v * rows + n] = dl(n, v);
    s.logits.resize(rows * vocab);
    s.dh_ref.resize(rows * hidden);
    s.dw_ref.resize(vocab * hidden);
}

void DecoderGemms::run_training() { s_->decoder->loss(s_->h, s_->targets, s_->weights, s_->bias, &s_->dh, &s_->grads); }
void DecoderGemms::run_evaluation() { s_->decoder->loss(s_->h, s_->targets, s_->weights, s_->bias); }

void DecoderGemms::run_reference(size_t i, int g) {
    State &s = *s_;
    const Sgemm &sgemm = sgemm_references(s.target).at(i).run;
    if (g == 0) sgemm(I(s.N), I(s.V), I(s.m), s.h.data.data(), s.weights_t.data(), s.logits.data());
    else if (g == 1) sgemm(I(s.N), I(s.m), I(s.V), s.dlogits.data(), s.weights.data.data(), s.dh_ref.data());
    else sgemm(I(s.V), I(s.m), I(s.N), s.dlogits_t.data(), s.h.data.data(), s.dw_ref.data());
}

double DecoderGemms::gemm_flops() const { return 2.0 * s_->N * s_->m * s_->V; }

double DecoderGemms::loss_rel_diff(size_t i) {
    State &s = *s_;
    run_reference(i, 0);
    double expected = 0;
    for (int64_t n = 0; n < s.N; n++) {
        const float *row = &s.logits[n * s.V];
        double mx = -INFINITY, sum = 0;
        for (int64_t v = 0; v < s.V; v++) mx = std::max(mx, static_cast<double>(row[v] + s.bias.data[v]));
        for (int64_t v = 0; v < s.V; v++) sum += std::exp(row[v] + s.bias.data[v] - mx);
        expected += mx + std::log(sum) - (row[s.targets[n]] + s.bias.data[s.targets[n]]);
    }
    const double ours = s.decoder->loss(s.h, s.targets, s.weights, s.bias);
    return std::abs(ours - expected) / std::abs(expected);
}

}  // namespace qrnn::bench
