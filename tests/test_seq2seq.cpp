// The reversal task and the token-level model over the encoder-decoder (nn/seq2seq.h, nn/optimizer.h): seeded
// batches are reproducible and correct, the output layer's gradients match finite differences, a short
// training run lowers the loss and greedy decoding stops at EOS (the CLI: tests/test_seq_tasks.cpp).
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "nn/optimizer.h"
#include "nn/seq2seq.h"

namespace qrnn::test {
namespace {
nn::TransductionTask small_task() {
    nn::TransductionTask t;
    t.vocab = 4, t.min_len = 2, t.max_len = 5;
    return t;
}

EncDecConfig small_config(const nn::TransductionTask &task, bool attention) {
    ModelConfig base;
    base.hidden = 16, base.layers = 1, base.window = 2, base.pooling = "fo", base.input = task.symbols(), base.seed = 3;
    return make_encdec_config(base, task.max_len, task.symbols(), attention);
}
}  // namespace

TEST(Seq2Seq, ReversalBatchesAreSeededAndCorrect) {
    const nn::TransductionTask task = small_task();
    nn::Seq2SeqBatch a = nn::transduction_batch(task, 6, 7, 0, 3), b = nn::transduction_batch(task, 6, 7, 0, 3);
    EXPECT_EQ(a.sources, b.sources);
    EXPECT_EQ(a.source.data, b.source.data);
    EXPECT_NE(a.sources, nn::transduction_batch(task, 6, 7, 0, 4).sources);
    EXPECT_NE(a.sources, nn::transduction_batch(task, 6, 7, 1, 3).sources);  // held-out split
    for (size_t i = 0; i < a.sources.size(); i++) {
        const auto &s = a.sources[i], &t = a.targets[i];
        ASSERT_GE(static_cast<int64_t>(s.size()), task.min_len);
        ASSERT_LE(static_cast<int64_t>(s.size()), task.max_len);
        EXPECT_EQ(a.lengths[i], static_cast<int64_t>(s.size()));
        ASSERT_EQ(t.size(), s.size() + 1);
        EXPECT_EQ(t.back(), task.eos());
        for (size_t j = 0; j < s.size(); j++) {
            EXPECT_EQ(t[j], s[s.size() - 1 - j]);
            EXPECT_EQ(a.source(j, i, s[j]), 1.0f);
            EXPECT_EQ(a.target_in(j + 1, i, t[j]), 1.0f);  // teacher forcing: the previous target token
        }
        EXPECT_EQ(a.target_in(0, i, task.bos()), 1.0f);
    }
}

// d(mean cross-entropy)/d(output weights, bias) against central differences of the float loss.
TEST(Seq2Seq, OutputLayerGradientsMatchFiniteDifferences) {
    const nn::TransductionTask task = small_task();
    nn::Seq2Seq model(small_config(task, true), task.symbols());
    nn::Seq2SeqBatch batch = nn::transduction_batch(task, 3, 1, 0, 0);
    model.loss_and_grads(batch);
    std::vector<nn::Param> params = model.params();
    double worst = 0;
    for (const nn::Param &p : params) {
        if (p.name.rfind("output/", 0) != 0) continue;
        const Tensor<float> grad = *p.grad;
        double scale = 0;
        for (float g : grad.data) scale = std::max(scale, std::abs(static_cast<double>(g)));
        for (size_t i = 0; i < p.value->size(); i += 5) {
            const float saved = p.value->data[i], eps = 1e-2f;
            p.value->data[i] = saved + eps;
            const double up = model.loss_and_grads(batch);
            p.value->data[i] = saved - eps;
            const double down = model.loss_and_grads(batch);
            p.value->data[i] = saved;
            worst = std::max(worst, std::abs((up - down) / (2 * eps) - grad.data[i]) / scale);
        }
    }
    EXPECT_LE(worst, 2e-2);
}

TEST(Seq2Seq, ShortTrainingLowersTheLossAndDecodingStops) {
    const nn::TransductionTask task = small_task();
    nn::Seq2Seq model(small_config(task, true), task.symbols());
    nn::Adam adam(nn::AdamOptions{1e-2});
    nn::Seq2SeqBatch fixed = nn::transduction_batch(task, 16, 2, 0, 0);
    const double first = model.loss_and_grads(fixed);
    for (int step = 0; step < 60; step++) {
        model.loss_and_grads(fixed);
        adam.step(model.params());
    }
    EXPECT_LT(model.loss_and_grads(fixed), 0.5 * first);
    Tensor<float> alpha;
    auto decoded = model.greedy_decode(fixed.source, fixed.lengths, task.bos(), task.eos(), 4, &alpha);
    ASSERT_EQ(decoded.size(), 16u);
    for (auto &d : decoded) EXPECT_LE(d.size(), 4u);
    EXPECT_EQ(alpha.shape, (std::vector<int64_t>{16, 4, fixed.source.dim(0)}));
    const double accuracy = nn::exact_match(decoded, fixed.targets);
    EXPECT_GE(accuracy, 0.0);
    EXPECT_LE(accuracy, 1.0);
}

TEST(Seq2Seq, AdamRejectsBadOptions) {
    EXPECT_THROW(nn::Adam(nn::AdamOptions{-1}), Error);
    nn::AdamOptions o;
    o.beta1 = 1;
    EXPECT_THROW(nn::Adam{o}, Error);
}

}  // namespace qrnn::test
