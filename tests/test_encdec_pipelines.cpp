// The encoder-decoder's Halide pipelines alone, the attention (runtime/compiled_attention.h) and the conditioning
// (runtime/compiled_condition.h), forward and gradients against the double reference (reference/attention.h,
// reference/encoder_decoder.h) on every CPU target this machine runs, on shapes that reach each version of the CPU
// schedules' GEMMs (gemm_core.h, in place): full register tiles with overlapping edge tiles (m = 37, 203; T, S, B
// not multiples of a tile), one-vector tiles (m = 20 under AVX-512), scalars (m < a vector), T = 1 (a decoding
// step), B = 1, masked sources.
#include <gtest/gtest.h>

#include "reference/encoder_decoder.h"
#include "runtime/compare.h"
#include "runtime/compiled_attention.h"
#include "runtime/compiled_condition.h"
#include "schedules/cpu_target.h"
#include "tests/support/finite_differences.h"
#include "tests/support/heap.h"

namespace qrnn::test {
namespace {

struct AttentionShape {
    int64_t T, S, B, m;
    std::vector<int64_t> lengths;
};

TEST(Attention, MatchesReferenceOnEveryCpuTarget) {
    const std::vector<AttentionShape> shapes{
        {1, 1, 1, 1, {1}},          {3, 5, 2, 7, {5, 2}},       {11, 13, 3, 37, {13, 1, 9}},
        {9, 35, 2, 20, {35, 17}},   {1, 40, 2, 48, {40, 33}},   {37, 53, 1, 203, {50}},
        // 161 rows: the mix and dk/dc GEMMs in more than one block of row tiles, the last one guarded.
        {23, 7, 7, 35, {7, 1, 5, 7, 3, 2, 6}},
    };
    for (const Halide::Target &target : runnable_cpu_targets()) {
        std::shared_ptr<CompiledAttention> attention = compiled_attention(target);
        for (const AttentionShape &p : shapes) {
            const uint32_t seed = static_cast<uint32_t>(p.T * 1000 + p.m);
            Tensor<double> cell = seeded_tensor({p.T, p.B, p.m}, seed, 1), gate_o = seeded_tensor({p.T, p.B, p.m}, seed, 2);
            Tensor<double> enc = seeded_tensor({p.S, p.B, p.m}, seed, 3), dout = seeded_tensor({p.T, p.B, p.m}, seed, 5);
            // Weights large enough for a softmax far from uniform.
            Tensor<double> weights = seeded_tensor({2, p.m, p.m}, seed, 4, 2.0 / std::sqrt(static_cast<double>(p.m)));
            ref::AttentionTrace want = ref::attention_forward(cell, gate_o, enc, p.lengths, weights);
            ref::AttentionGrads dwant = ref::attention_backward(cell, gate_o, enc, p.lengths, weights, dout);

            const Tensor<float> fcell = convert<float>(cell), fgate = convert<float>(gate_o), fenc = convert<float>(enc);
            const Tensor<float> fweights = convert<float>(weights);
            Tensor<float> out;
            AttentionTape tape;
            attention->forward(fcell, fgate, fenc, p.lengths, fweights, out, tape);
            AttentionGradsF grads;
            attention->backward(fcell, fgate, fenc, p.lengths, fweights, tape, convert<float>(dout), grads);
            const std::string where = target.to_string() + " T=" + std::to_string(p.T) + " S=" + std::to_string(p.S) +
                                      " B=" + std::to_string(p.B) + " m=" + std::to_string(p.m);
            const std::vector<std::tuple<std::string, const Tensor<float> *, const Tensor<double> *>> pairs{
                {"out", &out, &want.out},           {"alpha", &tape.alpha, &want.alpha},
                {"context", &tape.context, &want.context}, {"mixed", &tape.mixed, &want.mixed},
                {"dcell", &grads.dcell, &dwant.dcell},     {"denc", &grads.denc, &dwant.denc},
                {"dgate_o", &grads.dgate_o, &dwant.dgate_o}, {"dweights", &grads.dweights, &dwant.dweights}};
            for (const auto &[name, got, ref] : pairs) {
                ASSERT_EQ(got->shape, ref->shape) << where << " " << name;
                EXPECT_LE(compare(*got, *ref).rel(), 1e-4) << where << " " << name;
            }
            // The tape's transposed encoder outputs (the backward's score operand) are a copy.
            ASSERT_EQ(tape.enc_t.shape, (std::vector<int64_t>{p.B, p.m, p.S})) << where;
            int64_t differing = 0;
            for (int64_t b = 0; b < p.B; b++)
                for (int64_t h = 0; h < p.m; h++)
                    for (int64_t s = 0; s < p.S; s++) differing += tape.enc_t(b, h, s) != fenc(s, b, h);
            EXPECT_EQ(differing, 0) << where << " enc_t";
        }
    }
}

// What the attention's backward leaves allocated (its gradients, and its scratch kept by the JIT pipelines' buffer
// cache, runtime/buffer_cache.h) stays near the size of its buffers. When dk/dc's i was fused into its parallel loop,
// Halide inferred 279 values of i at this shape and the call allocated 480 MB for 3.4 MB of scratch.
TEST(Attention, BackwardScratchIsTheSizeOfItsBuffers) {
    const int64_t T = 64, S = 64, B = 16, m = 320;
    for (const Halide::Target &target : runnable_cpu_targets()) {
        std::shared_ptr<CompiledAttention> attention = compiled_attention(target);
        const Tensor<float> cell = convert<float>(seeded_tensor({T, B, m}, 7, 1));
        const Tensor<float> gate_o = convert<float>(seeded_tensor({T, B, m}, 7, 2));
        const Tensor<float> enc = convert<float>(seeded_tensor({S, B, m}, 7, 3));
        const Tensor<float> weights = convert<float>(seeded_tensor({2, m, m}, 7, 4, 0.1));
        const Tensor<float> dout = convert<float>(seeded_tensor({T, B, m}, 7, 5));
        const std::vector<int64_t> lengths(B, S);
        Tensor<float> out;
        AttentionTape tape;
        attention->forward(cell, gate_o, enc, lengths, weights, out, tape);
        const double before = heap_in_use();
        AttentionGradsF grads;
        attention->backward(cell, gate_o, enc, lengths, weights, tape, dout, grads);
        // Gradients 3 T B m + 2 m m (S = T); scratch: dk/dc 2 T B m, dmixed T B m, the transposed weights 2 m m,
        // dscore T S B: 6 T B m + 4 m m + T S B floats in all.
        const double floats = 6.0 * T * B * m + 4.0 * m * m + T * S * B;
        EXPECT_LE(heap_in_use() - before, 1.5 * 4 * floats) << target.to_string();
    }
}

TEST(Condition, MatchesReferenceOnEveryCpuTarget) {
    // (G, B, m): every size 1, B = 1 with an odd width, scalars, one-vector and full tiles with edges.
    const std::vector<std::array<int64_t, 3>> shapes{{1, 1, 1}, {3, 1, 7}, {2, 3, 5}, {3, 5, 20}, {4, 11, 37}, {3, 9, 203}};
    for (const Halide::Target &target : runnable_cpu_targets()) {
        std::shared_ptr<CompiledCondition> condition = compiled_condition(target);
        for (auto [G, B, m] : shapes) {
            const uint32_t seed = static_cast<uint32_t>(G * 1000 + B * 100 + m);
            Tensor<double> V = seeded_tensor({G, m, m}, seed, 1), last = seeded_tensor({B, m}, seed, 2);
            Tensor<double> dbias = seeded_tensor({G, B, m}, seed, 3);
            const Tensor<double> want = ref::condition_bias(V, last);
            const ref::ConditionGrads dwant = ref::condition_backward(V, last, dbias);
            const Tensor<float> fV = convert<float>(V), flast = convert<float>(last);
            Tensor<float> bias, dV, dlast;
            condition->forward(fV, flast, bias);
            condition->backward(fV, flast, convert<float>(dbias), dV, dlast);
            const std::string where = target.to_string() + " G=" + std::to_string(G) + " B=" + std::to_string(B) +
                                      " m=" + std::to_string(m);
            const std::vector<std::tuple<std::string, const Tensor<float> *, const Tensor<double> *>> pairs{
                {"bias", &bias, &want}, {"dV", &dV, &dwant.dV}, {"dlast", &dlast, &dwant.dlast}};
            for (const auto &[name, got, ref] : pairs) {
                ASSERT_EQ(got->shape, ref->shape) << where << " " << name;
                EXPECT_LE(compare(*got, *ref).rel(), 1e-5) << where << " " << name;
            }
        }
    }
}

// The double reference's conditioning gradients against central finite differences of sum(dbias * bias).
TEST(Condition, ReferenceGradientsMatchFiniteDifferences) {
    Tensor<double> V = seeded_tensor({3, 5, 5}, 7, 1), last = seeded_tensor({2, 5}, 7, 2), dbias = seeded_tensor({3, 2, 5}, 7, 3);
    const ref::ConditionGrads g = ref::condition_backward(V, last, dbias);
    FdWorst w = finite_difference_check({{"V", {&V, &g.dV}}, {"last", {&last, &g.dlast}}},
                                        [&] { return dot(dbias, ref::condition_bias(V, last)); });
    EXPECT_LE(w.rel, 1e-7) << w.name;
}

}  // namespace
}  // namespace qrnn::test
