// The JIT allocator (runtime/buffer_cache.h): freed blocks from 4 KiB are reused, and a layer's calls after
// warm-up take no fresh pages (glibc's heap used to grow by a 0.66 MB block on several early calls at B=8 T=64:
// ~190 page faults and 1.6x the time per call).
#include <gtest/gtest.h>

#include <cstdint>
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <sys/resource.h>

#include <dnnl.hpp>

#include "nn/layer.h"
#include "plugins/model.h"
#include "plugins/registry.h"
#include "plugins/training_model.h"
#include "runtime/buffer_cache.h"
#include "runtime/tensor.h"
#include "tests/support/param_name.h"

namespace qrnn {
namespace {

long minor_faults() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
}

TEST(BufferCache, ReusesFreedBlocksFrom4KiB) {
    void *small = cached_halide_malloc(nullptr, 5000);
    ASSERT_NE(small, nullptr);
    cached_halide_free(nullptr, small);
    void *plain_small = std::malloc(5000);  // glibc would hand back a block freed to it
    ASSERT_NE(plain_small, nullptr);
    static_cast<volatile char *>(plain_small)[0] = 1;
    void *small_again = cached_halide_malloc(nullptr, 4500);  // cached, as every block from 4 KiB is
    EXPECT_EQ(small_again, small);
    cached_halide_free(nullptr, small_again);
    std::free(plain_small);

    void *first = cached_halide_malloc(nullptr, 100000);
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
    cached_halide_free(nullptr, first);
    void *plain = std::malloc(100000);  // glibc would hand back a block freed to it
    ASSERT_NE(plain, nullptr);
    static_cast<volatile char *>(plain)[0] = 1;  // kept: not elided with its free
    void *again = cached_halide_malloc(nullptr, 90000);  // within a quarter of the freed block's size
    EXPECT_EQ(again, first);
    void *other = cached_halide_malloc(nullptr, 90000);  // nothing cached left: a fresh block
    EXPECT_NE(other, first);
    cached_halide_free(nullptr, other);
    void *bigger = cached_halide_malloc(nullptr, 200000);  // no cached block is large enough
    EXPECT_NE(bigger, other);
    cached_halide_free(nullptr, bigger);
    cached_halide_free(nullptr, again);
    std::free(plain);
}

// Tensors are stored on 64-byte boundaries (runtime/tensor.h): pipelines read weights in place with full vectors.
TEST(TensorStorage, IsCacheLineAligned) {
    for (int64_t n : {1, 3, 17, 1000, 100003, 1 << 20}) {
        Tensor<float> f({n});
        Tensor<double> d({n, 3});
        Tensor<float> copy = f;
        copy.data.resize(static_cast<size_t>(n) * 2 + 5);
        for (const void *p : {static_cast<const void *>(f.data.data()), static_cast<const void *>(d.data.data()),
                              static_cast<const void *>(copy.data.data())})
            EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << n;
    }
    Tensor<float> a({3});
    a.data = {1, 2, 3};
    EXPECT_EQ(a.data, (std::vector<float>{1, 2, 3}));  // comparable with a plain vector
    EXPECT_FALSE(a.data == (std::vector<float>{1, 2}));
}

// The page faults of `calls` calls of step, after `warm_up` calls that take their pages. A few may come from
// elsewhere in the process; one regrown intermediate is ~160 per call.
long faults_after_warm_up(const std::function<void()> &step, int warm_up, int calls) {
    for (int i = 0; i < warm_up; i++) step();
    const long before = minor_faults();
    for (int i = 0; i < calls; i++) step();
    return minor_faults() - before;
}

// model, or MODEL@PRECISION.
ModelConfig config(const std::string &model, int64_t B, int64_t T) {
    ModelConfig cfg;
    const size_t at = model.find('@');
    cfg.model = model.substr(0, at);
    if (at != std::string::npos) cfg.precision = model.substr(at + 1);
    cfg.batch = B, cfg.seq = T, cfg.input = 320, cfg.hidden = 320, cfg.window = 2;
    return cfg;
}

// Every CPU model plugin's forward.
class ModelCalls : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelCalls, TakeNoFreshPagesAfterWarmUp) {
#ifdef __SANITIZE_ADDRESS__
    GTEST_SKIP() << "AddressSanitizer's quarantine hands out fresh memory for every small allocation";
#endif
    if (GetParam() == "lstm-onednn" && dnnl::get_effective_cpu_isa() <= dnnl::cpu_isa::sse41)
        GTEST_SKIP() << "oneDNN's LSTM held to SSE4.1 (DNNL_MAX_CPU_ISA) is its reference implementation, which "
                        "takes fresh pages on every call";
    ModelConfig cfg = config(GetParam(), 8, 64);
    RunOptions opts;
    std::unique_ptr<Model> model = find_model(cfg.model).build(cfg, opts);
    EXPECT_LT(faults_after_warm_up([&] { model->forward(); }, 1, 20), 64) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Cpu, ModelCalls, ::testing::Values("qrnn", "lstm-halide", "lstm-onednn", "cnn", "cnn-maxpool"),
                         test::param_name);

// Every trainable CPU layer's training step: forward with its tape, backward with dx. The CNN's backward
// allocated its work tensors on every call: ~3,600 faults a step at B=16 T=128, 3-4x its time alone; the dense
// stack's shared gradient scratch changed shape from layer to layer (reallocated and zeroed three times a step).
// Not lstm-onednn@bf16: where oneDNN has a bf16 kernel it was not measured yet; its reference implementation (the
// only one on a CPU without avx512_bf16) takes ~40 fresh pages a step inside its backward.
class TrainingSteps : public ::testing::TestWithParam<std::string> {};

TEST_P(TrainingSteps, TakeNoFreshPagesAfterWarmUp) {
#ifdef __SANITIZE_ADDRESS__
    GTEST_SKIP() << "AddressSanitizer's quarantine hands out fresh memory for every small allocation";
#endif
    const int64_t B = 16, T = 128;
    ModelConfig cfg = config(GetParam(), B, T);
    if (cfg.model == "qrnn-dense") cfg.layers = 3;  // one block of three layers of widths 320, 640, 960
    std::unique_ptr<nn::Layer> layer = std::move(nn::make_layers(cfg).front());
    Tensor<float> x({T, B, layer->input_size()}), dy({T, B, layer->output_size()}), y, dx;
    std::fill(x.data.begin(), x.data.end(), 0.5f);
    std::fill(dy.data.begin(), dy.data.end(), 0.25f);
    auto tape = layer->make_tape();
    auto step = [&] {
        nn::State state = layer->initial_state(B);
        layer->forward(x, state, y, tape.get());
        layer->backward(*tape, dy, nullptr, &dx, nullptr);
    };
    // The first steps take their pages (the QRNN layer hands its dx scratch to the caller by a swap: two buffers
    // alternate from the second step on).
    EXPECT_LT(faults_after_warm_up(step, 3, 10), 64) << GetParam();
}

// The encoder-decoder's training step (`qrnn run --pass training`): it made fresh tapes, outputs and gradient
// tensors on every step, ~1,200 faults a step at B=16 T=64.
class EncDecTrainingSteps : public ::testing::TestWithParam<std::string> {};

TEST_P(EncDecTrainingSteps, TakeNoFreshPagesAfterWarmUp) {
#ifdef __SANITIZE_ADDRESS__
    GTEST_SKIP() << "AddressSanitizer's quarantine hands out fresh memory for every small allocation";
#endif
    ModelConfig cfg = config(GetParam(), 16, 64);
    cfg.layers = 2;
    std::unique_ptr<Model> model = build_training_model(cfg, RunOptions{});
    EXPECT_LT(faults_after_warm_up([&] { model->forward(); }, 3, 10), 64) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Cpu, EncDecTrainingSteps, ::testing::Values("encdec", "encdec-noattn"), test::param_name);

INSTANTIATE_TEST_SUITE_P(Cpu, TrainingSteps,
                         ::testing::Values("qrnn", "lstm-halide", "lstm-onednn", "cnn", "qrnn-dense", "qrnn-bidir",
                                           "qrnn-bidir-sum", "qrnn@bf16", "lstm-halide@bf16", "cnn@bf16", "qrnn-dense@bf16"),
                         test::param_name);

}  // namespace
}  // namespace qrnn
