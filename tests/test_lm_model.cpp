// lm/: the corpus loader and batchify, the softmax decoder against a double-precision reference, and a
// whole-model gradient check (finite differences through embedding, stack, dropouts, decoder and loss).
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "core/error.h"
#include "lm/corpus.h"
#include "lm/language_model.h"
#include "tests/support/cli.h"
#include "tests/support/finite_differences.h"
#include "tests/support/lm_problem.h"

using namespace qrnn;
using namespace qrnn::lm;
using qrnn::test::small_batch;
using qrnn::test::small_lm;
using qrnn::test::small_run;
using qrnn::test::write_scratch;

TEST(Corpus, VocabularyEosUnkAndBatchify) {
    const std::string train = write_scratch("train.txt", "a b c\n\nb a\n");
    const std::string valid = write_scratch("valid.txt", "a z\n");
    Vocabulary v = Vocabulary::from_file(train);
    EXPECT_EQ(v.words(), (std::vector<std::string>{"a", "b", "c", "<eos>", "<unk>"}));
    std::vector<int32_t> t = read_tokens(train, v);  // a b c <eos> <eos> b a <eos>
    EXPECT_EQ(t, (std::vector<int32_t>{0, 1, 2, 3, 3, 1, 0, 3}));
    EXPECT_EQ(read_tokens(valid, v), (std::vector<int32_t>{0, 4, 3}));
    BatchStream s(t, 2, 2, "train");  // streams [0 1 2 3] and [3 1 0 3]
    ASSERT_EQ(s.batches(), 2);
    Batch b0 = s.batch(0), b1 = s.batch(1);
    EXPECT_EQ(b0.T, 2);
    EXPECT_EQ(b0.inputs, (std::vector<int32_t>{0, 3, 1, 1}));   // [t][b]
    EXPECT_EQ(b0.targets, (std::vector<int32_t>{1, 1, 2, 0}));
    EXPECT_EQ(b1.T, 1);  // the last window is shorter
    EXPECT_EQ(b1.inputs, (std::vector<int32_t>{2, 0}));
    EXPECT_EQ(b1.targets, (std::vector<int32_t>{3, 3}));
    // Unigram: add-one counts over the training tokens.
    EXPECT_NEAR(unigram_perplexity({0, 0, 1}, {0}, 2), 5.0 / 3.0, 1e-12);
}

TEST(Corpus, ErrorsNameTheFile) {
    const std::string empty = write_scratch("empty.txt", "\n  \n");
    auto message = [](auto f) {
        try {
            f();
        } catch (const Error &e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message([&] { Vocabulary::from_file(empty); }).find(empty + ": token file holds no words"), std::string::npos);
    EXPECT_NE(message([] { Vocabulary::from_file("/nonexistent/x.txt"); }).find("/nonexistent/x.txt: cannot read"),
              std::string::npos);
    EXPECT_NE(message([] { Vocabulary::from_file("/tmp"); }).find("/tmp: is a directory"), std::string::npos);
    std::vector<int32_t> three{0, 1, 2};
    EXPECT_NE(message([&] { BatchStream(three, 2, 4, "tiny.txt"); }).find("tiny.txt: 3 tokens are too few"), std::string::npos);
}

namespace {
// -sum log softmax(h W^T + b)[target] and its gradients, in double.
double reference_loss(const Tensor<double> &h, const std::vector<int32_t> &targets, const Tensor<double> &w,
                      const Tensor<double> &b, Tensor<double> &dh, Tensor<double> &dw, Tensor<double> &db) {
    const int64_t N = static_cast<int64_t>(targets.size()), V = w.dim(0), m = w.dim(1);
    dh = Tensor<double>({N, m}), dw = Tensor<double>({V, m}), db = Tensor<double>({V});
    double total = 0;
    for (int64_t n = 0; n < N; n++) {
        std::vector<double> z(V);
        double top = -1e300, sum = 0;
        for (int64_t v = 0; v < V; v++) {
            z[v] = b.data[v];
            for (int64_t c = 0; c < m; c++) z[v] += h.data[n * m + c] * w.data[v * m + c];
            top = std::max(top, z[v]);
        }
        for (auto x : z) sum += std::exp(x - top);
        total += std::log(sum) + top - z[targets[n]];
        for (int64_t v = 0; v < V; v++) {
            const double g = std::exp(z[v] - top) / sum - (v == targets[n]);
            db.data[v] += g;
            for (int64_t c = 0; c < m; c++) {
                dh.data[n * m + c] += g * w.data[v * m + c];
                dw.data[v * m + c] += g * h.data[n * m + c];
            }
        }
    }
    return total;
}

double max_rel(const Tensor<float> &got, const Tensor<double> &want) {
    double err = 0, scale = 1e-30;
    for (size_t i = 0; i < want.size(); i++) {
        err = std::max(err, std::abs(got.data[i] - want.data[i]));
        scale = std::max(scale, std::abs(want.data[i]));
    }
    return err / scale;
}
}  // namespace

TEST(SoftmaxDecoder, MatchesTheDoubleReference) {
    for (auto [N, V, m] : {std::tuple<int64_t, int64_t, int64_t>{1, 2, 1}, {7, 13, 5}, {33, 101, 17}}) {
        Tensor<double> h = test::seeded_tensor({N, m}, 1, 0, 2.0), w = test::seeded_tensor({V, m}, 1, 1, 2.0),
                       b = test::seeded_tensor({V}, 1, 2, 1.0);
        std::vector<int32_t> targets;
        for (int64_t n = 0; n < N; n++) targets.push_back(static_cast<int32_t>((n * 7 + 3) % V));
        Tensor<double> dh, dw, db;
        const double want = reference_loss(h, targets, w, b, dh, dw, db);
        SoftmaxDecoder dec(V, m);
        DecoderGrads g{Tensor<float>({V, m}, 0.5f), Tensor<float>({V}, 0.25f)};  // accumulated into
        Tensor<float> dhf;
        const double got = dec.loss(convert<float>(h), targets, convert<float>(w), convert<float>(b), &dhf, &g);
        EXPECT_NEAR(got, want, 1e-5 * std::abs(want)) << N << " " << V << " " << m;
        EXPECT_NEAR(dec.loss(convert<float>(h), targets, convert<float>(w), convert<float>(b)), want, 1e-5 * std::abs(want));
        for (auto &x : g.dweights.data) x -= 0.5f;
        for (auto &x : g.dbias.data) x -= 0.25f;
        // Float vs the double reference (the bar): dW and db were accumulated onto 0.5 and 0.25.
        EXPECT_LT(max_rel(dhf, dh), 1e-4);
        EXPECT_LT(max_rel(g.dweights, dw), 1e-4);
        EXPECT_LT(max_rel(g.dbias, db), 1e-4);
    }
    // Stable for huge logits.
    SoftmaxDecoder dec(3, 1);
    Tensor<float> h({1, 1}, 1000.0f), w({3, 1}), b({3});
    w.data = {1, 0.5f, -1};
    EXPECT_NEAR(dec.loss(h, {1}, w, b), 500.0, 1e-3);
}

TEST(Embedding, ForwardAndBackward) {
    Tensor<float> table({3, 2}), x({2, 1, 2}), dtable({3, 2}, 1.0f), dx({2, 1, 2});
    table.data = {1, 2, 3, 4, 5, 6};
    embedding_forward(table, {2, 2}, x);
    EXPECT_EQ(x.shape, (std::vector<int64_t>{2, 1, 2}));
    EXPECT_EQ(x.data, (std::vector<float>{5, 6, 5, 6}));
    dx.data = {1, 2, 3, 4};
    embedding_backward({2, 0}, dx, dtable);
    EXPECT_EQ(dtable.data, (std::vector<float>{4, 5, 1, 1, 2, 3}));
}

namespace {
// The worst relative error of the model's gradients against central differences of its loss (in float,
// summed in double): from a carried state left by a first batch, masks on. `corrupt` scales the analytic
// gradient of the embedding, to show the check fails on a wrong gradient.
test::FdWorst gradient_error(const std::string &model_name, float corrupt = 1.0f) {
    LanguageModel model(small_lm(model_name), small_run());
    model.set_stochastic(true);
    model.reset_state(2, 0);
    model.step(small_batch(0), false);  // a non-zero carried state
    const std::vector<nn::State> carried = model.carried_state();
    const Batch batch = small_batch(1);
    model.zero_grads();
    model.step(batch, true);
    test::FdWorst worst;
    for (auto &p : model.params()) {
        const Tensor<float> analytic = *p.grad;
        double err = 0, scale = 1e-12;
        for (size_t i = 0; i < p.value->size(); i++) {
            const float keep = p.value->data[i], eps = 1e-2f;
            auto loss_at = [&](float v) {
                p.value->data[i] = v;
                model.carried_state() = carried;
                return model.step(batch, false).loss;
            };
            const double fd = (loss_at(keep + eps) - loss_at(keep - eps)) / (2.0 * eps);
            p.value->data[i] = keep;
            const double a = analytic.data[i] * (p.name == "embedding" ? corrupt : 1.0f);
            err = std::max(err, std::abs(fd - a));
            scale = std::max(scale, std::abs(a));
        }
        if (err / scale > worst.rel) worst = {err / scale, p.name};
    }
    return worst;
}
}  // namespace

TEST(LanguageModel, WholeModelGradientMatchesFiniteDifferences) {
    for (const char *model : {"qrnn", "lstm-onednn"}) {
        test::FdWorst w = gradient_error(model);
        std::cout << model << ": worst relative gradient error " << w.rel << " (" << w.name << ")\n";
        // Central differences of a float loss (eps 1e-2): about 4e-2 of noise with the Halide decoder (measured
        // 0.039 qrnn, 0.023 lstm-onednn); a wrong gradient is caught below by a margin above it.
        EXPECT_LT(w.rel, 6e-2) << model << ": worst parameter " << w.name;
    }
}

TEST(LanguageModel, GradientCheckCatchesAWrongGradient) {
    test::FdWorst w = gradient_error("qrnn", 1.25f);  // the embedding's gradient 25% off
    EXPECT_GT(w.rel, 0.15);
    EXPECT_EQ(w.name, "embedding");
}

TEST(LanguageModel, StepsAreDeterministic) {
    auto run = [] {
        LanguageModel model(small_lm("qrnn"), small_run());
        model.set_stochastic(true);
        model.reset_state(2, 0);
        for (int i = 0; i < 3; i++) {
            model.zero_grads();
            model.step(small_batch(i), true);
            for (auto &p : model.params())
                for (size_t j = 0; j < p.value->size(); j++) p.value->data[j] -= 0.5f * p.grad->data[j];
        }
        std::vector<float> all;
        for (auto &p : model.params()) all.insert(all.end(), p.value->data.begin(), p.value->data.end());
        return all;
    };
    EXPECT_EQ(run(), run());
}
