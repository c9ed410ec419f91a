// pQRNN as the sequence classifier's projection front end (tasks/classifier_front.h, tasks/seq_classifier.h): the
// dense ReLU bottleneck (nn/bottleneck.h) and the pooling over real steps (tasks/sequence_pooling.h: mean, last,
// max; tasks/attention_pooling.h) against their double references (reference/bottleneck.h), which match central
// finite differences; the whole classifier's gradients (bottleneck, bidirectional stack, pooling, output) against
// finite differences of its float loss on awkward shapes; the projection reads ClassifyBatch::words when present,
// else the ids' decimal strings, and has no embedding table; parameter counts of both fronts; `qrnn train --task
// classify --front projection`'s keys, errors and checkpoint identity; pQRNN's line in `qrnn plugins`.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "core/error.h"
#include "nn/bottleneck.h"
#include "reference/bottleneck.h"
#include "tasks/distillation.h"
#include "tasks/seq_classifier.h"
#include "tests/support/cli.h"
#include "tests/support/finite_differences.h"
#include "tests/support/classifier_check.h"

namespace qrnn::test {
namespace {

// Streams of this file's seeded test tensors.
constexpr uint32_t kInput = 1, kWeights = 2, kBias = 3, kOutputGrad = 4;

// x [T][B][N] in {-1, 0, +1} as the projection gives (ternary) or uniform in [-1, 1), zero past each length.
Tensor<double> bottleneck_input(int64_t T, const std::vector<int64_t> &lengths, int64_t N, bool ternary) {
    Tensor<double> x = seeded_tensor({T, static_cast<int64_t>(lengths.size()), N}, 7, kInput, ternary ? 1.5 : 1.0);
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < x.dim(1); b++)
            for (int64_t i = 0; i < N; i++) {
                double &v = x(t, b, i);
                v = t >= lengths[b] ? 0.0 : ternary ? std::round(v) : v;
            }
    return x;
}

template <class To, class From>
Tensor<To> same(const Tensor<From> &t) { return convert<To>(t); }

// max |a - b| / max(1e-3, max |b|).
double relative_error(const Tensor<float> &a, const Tensor<double> &b) {
    double worst = 0, scale = 1e-3;
    for (size_t i = 0; i < b.size(); i++) scale = std::max(scale, std::abs(b.data[i]));
    for (size_t i = 0; i < b.size(); i++) worst = std::max(worst, std::abs(a.data[i] - b.data[i]));
    return worst / scale;
}

// The shape of the classifier's parameter `name`, empty when it has none.
std::vector<int64_t> shape_of(lm::SequenceClassifier &clf, const std::string &name) {
    for (const nn::Param &p : clf.params())
        if (p.name == name) return p.value->shape;
    return {};
}

}  // namespace

// The double reference's gradients (loss = sum(dy * y)) against central differences; the float bottleneck's output
// and gradients against the reference. Shapes: one step of one sequence and one feature, lengths below T, odd
// widths, ternary and real inputs. Steps past a length stay zero and their dy (set huge) changes nothing.
TEST(Bottleneck, MatchesItsDoubleReferenceWhichMatchesFiniteDifferences) {
    struct Shape {
        int64_t T;
        std::vector<int64_t> lengths;
        int64_t N, n;
        bool ternary;
    };
    for (const Shape &s : {Shape{1, {1}, 1, 1, true}, Shape{5, {5, 2, 1}, 7, 5, true}, Shape{4, {3, 4}, 9, 3, false},
                           Shape{3, {1, 3, 2, 2}, 33, 17, true}}) {
        const int64_t B = static_cast<int64_t>(s.lengths.size());
        const std::string what = "T=" + std::to_string(s.T) + " B=" + std::to_string(B) + " N=" + std::to_string(s.N) + " n=" +
                                 std::to_string(s.n);
        Tensor<double> x = bottleneck_input(s.T, s.lengths, s.N, s.ternary);
        nn::Bottleneck layer(s.N, s.n, 3, kWeights);
        auto params = layer.params();
        Tensor<double> w = same<double>(*params[0].value), bias = seeded_tensor({s.n}, 3, kBias, 0.3);
        *params[1].value = same<float>(bias);
        Tensor<double> dy = seeded_tensor({s.T, B, s.n}, 5, kOutputGrad);
        for (int64_t b = 0; b < B; b++)
            for (int64_t t = s.lengths[b]; t < s.T; t++)
                for (int64_t j = 0; j < s.n; j++) dy(t, b, j) = 1e6;  // past the length: must be ignored

        const ref::BottleneckGrads g = ref::bottleneck_backward(x, s.lengths, w, bias, dy);
        const auto loss = [&] {
            Tensor<double> y = ref::bottleneck_forward(x, s.lengths, w, bias);
            double sum = 0;
            for (int64_t t = 0; t < s.T; t++)
                for (int64_t b = 0; b < B; b++)
                    for (int64_t j = 0; j < s.n && t < s.lengths[b]; j++) sum += dy(t, b, j) * y(t, b, j);
            return sum;
        };
        const FdWorst fd = finite_difference_check({{"weights", {&w, &g.dweights}}, {"bias", {&bias, &g.dbias}}}, loss);
        EXPECT_LE(fd.rel, 1e-6) << what << ": reference vs finite differences, " << fd.name;

        Tensor<float> y;
        const Tensor<float> xf = same<float>(x);
        layer.forward(xf, s.lengths, y);
        const Tensor<double> y_ref = ref::bottleneck_forward(x, s.lengths, w, bias);
        EXPECT_LE(relative_error(y, y_ref), 1e-5) << what << ": forward";
        for (int64_t b = 0; b < B; b++)
            for (int64_t t = s.lengths[b]; t < s.T; t++)
                for (int64_t j = 0; j < s.n; j++) ASSERT_EQ(y(t, b, j), 0.0f) << what << ": past the length";
        layer.zero_grads();
        layer.backward(xf, s.lengths, y, same<float>(dy));
        layer.backward(xf, s.lengths, y, same<float>(dy));  // accumulates
        Tensor<double> twice_w = g.dweights, twice_b = g.dbias;
        for (double &v : twice_w.data) v *= 2;
        for (double &v : twice_b.data) v *= 2;
        EXPECT_LE(relative_error(*params[0].grad, twice_w), 1e-5) << what << ": dweights";
        EXPECT_LE(relative_error(*params[1].grad, twice_b), 1e-5) << what << ": dbias";
        std::cout << "bottleneck " << what << ": reference vs finite differences " << fd.rel << ", float dweights vs reference "
                  << relative_error(*params[0].grad, twice_w) << "\n";
    }
    nn::Bottleneck layer(4, 3, 1, kWeights);
    Tensor<float> y;
    EXPECT_THROW(layer.forward(Tensor<float>({2, 1, 5}), {2}, y), Error);  // N = 5, not 4
    EXPECT_THROW(layer.forward(Tensor<float>({2, 1, 4}), {3}, y), Error);  // length above T
}

// mean, last and max over each sequence's real steps (one of length 1, one of T): the double reference's dh against
// central differences (max away from ties: distinct random values), the float pooling against the reference.
TEST(SequencePooling, MatchesItsDoubleReferenceWhichMatchesFiniteDifferences) {
    const std::vector<int64_t> lengths{4, 1, 3};
    const int64_t T = 4, B = 3, m = 5;
    for (const std::string pool : {"mean", "last", "max"}) {
        Tensor<double> h = seeded_tensor({T, B, m}, 2, kInput);
        const Tensor<double> dpooled = seeded_tensor({B, m}, 2, kOutputGrad);
        const Tensor<double> dh = ref::pool_steps_backward(h, lengths, pool, dpooled);
        const FdWorst fd = finite_difference_check({{"h", {&h, &dh}}}, [&] { return dot(ref::pool_steps(h, lengths, pool), dpooled); });
        EXPECT_LE(fd.rel, 1e-6) << pool;

        const lm::PooledSteps p = lm::pool_steps(same<float>(h), lengths, pool);
        EXPECT_LE(relative_error(p.pooled, ref::pool_steps(h, lengths, pool)), 1e-6) << pool;
        EXPECT_LE(relative_error(lm::pool_steps_backward(p, same<float>(dpooled), lengths, pool, T, 1.0f), dh), 1e-6) << pool;
        Tensor<double> half_dh = dh;
        for (double &v : half_dh.data) v *= 0.5;
        EXPECT_LE(relative_error(lm::pool_steps_backward(p, same<float>(dpooled), lengths, pool, T, 0.5f), half_dh), 1e-6)
            << pool << ": scale";
    }
    EXPECT_THROW(lm::check_pool("median"), Error);
}

// Attention pooling with a query large enough that the weights are far from uniform, over lengths T, 1 and between:
// the double reference's dh and dquery against central differences, the float pooling (weights summing to 1 over
// each sequence's real steps, 0 past) and its gradients against the reference, scaled; a zero query is mean pooling.
TEST(SequencePooling, AttentionMatchesItsDoubleReferenceWhichMatchesFiniteDifferences) {
    const std::vector<int64_t> lengths{4, 1, 3};
    const int64_t T = 4, B = 3, m = 5;
    Tensor<double> h = seeded_tensor({T, B, m}, 2, kInput, 2.0), query = seeded_tensor({m}, 3, kWeights, 1.5);
    const Tensor<double> dpooled = seeded_tensor({B, m}, 2, kOutputGrad);
    const ref::AttentionPoolGrads g = ref::attention_pool_backward(h, lengths, query, dpooled);
    const FdWorst fd = finite_difference_check({{"h", {&h, &g.dh}}, {"query", {&query, &g.dquery}}},
                                               [&] { return dot(ref::attention_pool(h, lengths, query), dpooled); });
    EXPECT_LE(fd.rel, 1e-6) << fd.name;

    const lm::AttentionPooled p = lm::attention_pool(same<float>(h), lengths, same<float>(query));
    EXPECT_LE(relative_error(p.pooled, ref::attention_pool(h, lengths, query)), 1e-6);
    double lowest = 1, highest = 0;
    for (int64_t b = 0; b < B; b++) {
        double sum = 0;
        for (int64_t t = 0; t < T; t++) {
            if (t >= lengths[b]) EXPECT_EQ(p.alpha(t, b), 0.0f) << "t " << t << " b " << b;
            sum += p.alpha(t, b);
            if (lengths[b] > 1 && t < lengths[b]) lowest = std::min(lowest, double(p.alpha(t, b))), highest = std::max(highest, double(p.alpha(t, b)));
        }
        EXPECT_NEAR(sum, 1.0, 1e-6) << "b " << b;
    }
    EXPECT_GT(highest - lowest, 0.2) << "the weights are nearly uniform: the check would not see the query";
    for (const float scale : {1.0f, 0.5f}) {
        Tensor<float> dquery({m});
        const Tensor<float> dh = lm::attention_pool_backward(same<float>(h), lengths, same<float>(query), p, same<float>(dpooled),
                                                             scale, dquery);
        ref::AttentionPoolGrads scaled = g;
        for (Tensor<double> *t : {&scaled.dh, &scaled.dquery})
            for (double &v : t->data) v *= scale;
        EXPECT_LE(relative_error(dh, scaled.dh), 1e-6) << "scale " << scale;
        EXPECT_LE(relative_error(dquery, scaled.dquery), 1e-6) << "scale " << scale;
    }
    const Tensor<double> zero({m});
    EXPECT_LE(relative_error(lm::attention_pool(same<float>(h), lengths, same<float>(zero)).pooled, ref::pool_steps(h, lengths, "mean")),
              1e-6);
    lm::check_pool("attention");
}

// d(mean cross-entropy) against central differences of the float loss for every parameter (a sample of each) of
// projection classifiers with bidirectional stacks: one sequence of one step (window 2 > T), lengths below T with
// window 4 > T = 3 and odd widths, tokens as words, attention pooling (its query made nonzero first, so that its
// gradient also reaches the stack through the weights); and max pooling behind an embedding.
TEST(PqrnnClassifier, GradientsMatchFiniteDifferences) {
    struct Case {
        std::string model, pool, front;
        int64_t batch, min_len, max_len, window, features;
        bool words;
    };
    for (const Case &c : {Case{"qrnn-bidir", "max", "projection", 1, 1, 1, 2, 5, false},
                          Case{"qrnn-varlen", "mean", "projection", 3, 1, 3, 4, 7, false},
                          Case{"qrnn-bidir", "last", "projection", 4, 2, 5, 2, 33, true},
                          Case{"qrnn-bidir", "attention", "projection", 4, 1, 5, 2, 33, true},
                          Case{"qrnn-bidir", "max", "embedding", 4, 1, 5, 3, 0, false}}) {
        lm::ClassifierShape shape;
        shape.stack.model = c.model, shape.stack.pooling = "fo", shape.stack.window = c.window, shape.stack.input = 3;
        shape.stack.hidden = 5, shape.stack.layers = 2, shape.stack.seed = 4;
        shape.vocab = 4, shape.pool = c.pool, shape.front = c.front, shape.projection_features = c.features;
        shape.projection_seed = 11;
        nn::CountTask task;
        task.vocab = 4, task.min_len = c.min_len, task.max_len = c.max_len;
        nn::ClassifyBatch batch = nn::count_batch(task, c.batch, 3, 0, 0);
        if (c.words)
            for (size_t i = 0; i < batch.tokens.size(); i++)
                batch.words.push_back(i / batch.lengths.size() < static_cast<size_t>(batch.lengths[i % batch.lengths.size()])
                                          ? "word" + std::to_string(batch.tokens[i] * 7 + static_cast<int>(i % 3))
                                          : "");
        lm::SequenceClassifier clf(shape, {c.batch, c.max_len});
        EXPECT_EQ(shape_of(clf, "pool/query").empty(), c.pool != "attention") << c.pool;
        for (const nn::Param &p : clf.params())
            if (p.name == "pool/query") *p.value = same<float>(seeded_tensor(p.value->shape, 6, kWeights, 2.0));
        const double worst = test::classifier_gradient_error(clf, batch, 5, 2e-2, std::string(c.model) + " " + c.front);
        std::cout << c.front << " " << c.model << " (pool " << c.pool << ", B=" << c.batch << ", T=" << batch.T << ", k=" << c.window
                  << (c.front == "projection" ? ", N=" + std::to_string(c.features) : "") << (c.words ? ", words" : "")
                  << "): worst relative gradient error " << worst << "\n";
    }
}

// An ensemble of teachers (`teacher: a.h5,b.h5`): the list split at commas, an empty name an error; their logits'
// element-wise mean.
TEST(Distillation, TeacherListAndEnsembleMean) {
    EXPECT_EQ(lm::teacher_checkpoints("a.h5"), (std::vector<std::string>{"a.h5"}));
    EXPECT_EQ(lm::teacher_checkpoints("a.h5,b/c.h5"), (std::vector<std::string>{"a.h5", "b/c.h5"}));
    for (const char *bad : {"", "a.h5,", ",a.h5", "a.h5,,b.h5"}) EXPECT_THROW(lm::teacher_checkpoints(bad), Error) << bad;
    EXPECT_EQ(lm::mean_logits({{1, -2, 4}, {3, 2, -1}}), (std::vector<double>{2, 0, 1.5}));
    EXPECT_THROW(lm::mean_logits({{1, 2}, {1, 2, 3}}), Error);
}

// Distillation's loss (tasks/distillation.h) against its definition written out for two classes, stable at large
// logits; its gradient in the logits against central differences (3 classes, weights 0, 0.3 and 1, temperatures 1
// and 4); w = 0 is cross-entropy, w = 1 with the teacher's logits its own is zero; bad settings are errors.
TEST(Distillation, LossMatchesItsDefinitionAndFiniteDifferences) {
    const std::vector<double> z = {0.5, -1.0}, t = {2.0, 0.0};
    const lm::Distillation d{0.3, 2.0};
    const double p0 = 1 / (1 + std::exp(-1.5)), ps0 = 1 / (1 + std::exp(-0.75)), q0 = 1 / (1 + std::exp(-1.0));
    const double kl = q0 * std::log(q0 / ps0) + (1 - q0) * std::log((1 - q0) / (1 - ps0));
    EXPECT_NEAR(lm::distillation_loss(z, t, {1}, 2, d), 0.7 * -std::log(1 - p0) + 0.3 * 4 * kl, 1e-12);
    EXPECT_NEAR(lm::distillation_loss(z, t, {0}, 2, {0, 3}), -std::log(p0), 1e-12);
    std::vector<double> dz;
    EXPECT_NEAR(lm::distillation_loss(z, z, {0}, 2, {1, 3}, &dz), 0, 1e-12);
    EXPECT_NEAR(std::abs(dz[0]) + std::abs(dz[1]), 0, 1e-12);
    EXPECT_TRUE(std::isfinite(lm::distillation_loss({800, -800}, {-800, 800}, {1}, 2, d)));

    const std::vector<double> logits = {0.3, -1.2, 2.0, 1.5, 0.1, -0.4}, teacher = {1.0, 0.0, -2.0, -0.5, 3.0, 0.2};
    const std::vector<int32_t> labels = {2, 0};
    for (const lm::Distillation c : {lm::Distillation{0, 1}, lm::Distillation{0.3, 4}, lm::Distillation{1, 4}}) {
        lm::distillation_loss(logits, teacher, labels, 3, c, &dz);
        for (size_t i = 0; i < logits.size(); i++) {
            std::vector<double> up = logits, down = logits;
            up[i] += 1e-5, down[i] -= 1e-5;
            const double fd = (lm::distillation_loss(up, teacher, labels, 3, c) - lm::distillation_loss(down, teacher, labels, 3, c)) / 2e-5;
            EXPECT_NEAR(dz[i], fd, 1e-7) << "w " << c.weight << " tau " << c.temperature << " logit " << i;
        }
    }
    EXPECT_THROW(lm::distillation_loss(z, t, {1}, 2, {1.5, 2}), Error);
    EXPECT_THROW(lm::distillation_loss(z, t, {1}, 2, {0.5, 0}), Error);
    EXPECT_THROW(lm::distillation_loss(z, t, {2}, 2, d), Error);
    EXPECT_THROW(lm::distillation_loss(z, {1.0}, {1}, 2, d), Error);
}

// The classifier's distillation gradients (bottleneck, bidirectional stack, pooling, output) against central
// differences of its loss, with seeded teacher logits: mean pooling over lengths below T, and attention.
TEST(Distillation, ClassifierGradientsMatchFiniteDifferences) {
    for (const std::string pool : {"mean", "attention"}) {
        lm::ClassifierShape shape;
        shape.stack.model = "qrnn-bidir", shape.stack.pooling = "ifo", shape.stack.window = 2, shape.stack.input = 3;
        shape.stack.hidden = 5, shape.stack.layers = 1, shape.stack.seed = 2;
        shape.vocab = 4, shape.classes = 3, shape.pool = pool, shape.front = "projection", shape.projection_features = 9;
        nn::CountTask task;
        task.vocab = 4, task.min_len = 1, task.max_len = 4;
        nn::ClassifyBatch batch = nn::count_batch(task, 3, 5, 0, 0);
        for (int32_t &label : batch.labels) label %= 3;
        lm::SequenceClassifier clf(shape, {3, 4});
        for (const nn::Param &p : clf.params())
            if (p.name == "pool/query") *p.value = same<float>(seeded_tensor(p.value->shape, 6, kWeights, 2.0));
        const Tensor<double> seeded = seeded_tensor({3, 3}, 8, kOutputGrad, 3.0);
        const std::vector<double> teacher(seeded.data.begin(), seeded.data.end());
        const lm::Distillation d{0.6, 3.0};
        auto loss = [&](bool train) -> double {
            if (train) return clf.distillation_loss(batch, teacher, d);
            return lm::distillation_loss(clf.logits(batch), teacher, batch.labels, 3, d) / 3.0;
        };
        const double worst = test::classifier_gradient_error(clf, loss, 3, 2e-2, "distillation, pool " + pool);
        std::cout << "distillation (w 0.6, tau 3), pool " << pool << ": worst relative gradient error " << worst << "\n";
    }
}

// No embedding table in projection mode; the features come from the words when the batch has them (same ids,
// other words: another loss; the ids' decimal strings as words: the same loss as without words), else from the
// ids; the embedding front reads ids only.
TEST(PqrnnClassifier, ProjectsWordsWhenPresentElseIds) {
    lm::ClassifierShape shape;
    shape.stack.model = "qrnn-bidir", shape.stack.pooling = "fo", shape.stack.window = 2, shape.stack.input = 4;
    shape.stack.hidden = 6, shape.stack.layers = 1, shape.stack.seed = 2;
    shape.vocab = 4, shape.front = "projection", shape.projection_features = 24;
    nn::CountTask task;
    task.vocab = 4, task.min_len = 2, task.max_len = 6;
    const nn::ClassifyBatch ids = nn::count_batch(task, 5, 9, 0, 0);
    nn::ClassifyBatch as_ids = ids, other = ids;
    const size_t B = ids.lengths.size();
    for (size_t i = 0; i < ids.tokens.size(); i++) {
        const bool real = static_cast<int64_t>(i / B) < ids.lengths[i % B];
        as_ids.words.push_back(real ? std::to_string(ids.tokens[i]) : "");
        other.words.push_back(real ? "w" + std::to_string(ids.tokens[i]) : "");
    }
    lm::SequenceClassifier clf(shape, {5, 6});
    EXPECT_TRUE(shape_of(clf, "embedding").empty()) << "a projection classifier has an embedding table";
    EXPECT_EQ(shape_of(clf, "bottleneck/weights"), (std::vector<int64_t>{24, 4}));
    EXPECT_EQ(shape_of(clf, "bottleneck/bias"), (std::vector<int64_t>{4}));
    const double from_ids = clf.loss(ids, false);
    EXPECT_EQ(clf.loss(as_ids, false), from_ids);
    EXPECT_NE(clf.loss(other, false), from_ids);
    nn::ClassifyBatch short_words = other;
    short_words.words.pop_back();
    EXPECT_THROW(clf.loss(short_words, false), Error);

    lm::ClassifierShape seeded = shape;
    seeded.projection_seed = 1;  // other hashes: other features
    EXPECT_NE(lm::SequenceClassifier(seeded, {5, 6}).loss(ids, false), from_ids);

    lm::ClassifierShape embedding = shape;
    embedding.front = "embedding";
    lm::SequenceClassifier emb(embedding, {5, 6});
    EXPECT_EQ(shape_of(emb, "embedding"), (std::vector<int64_t>{4, 4}));
    EXPECT_EQ(emb.loss(other, false), emb.loss(ids, false));

    lm::ClassifierShape bad = shape;
    bad.front = "hashing";
    EXPECT_THROW(lm::SequenceClassifier(bad, {5, 6}), Error);
    bad = shape, bad.projection_features = 5000;
    EXPECT_THROW(lm::SequenceClassifier(bad, {5, 6}), Error);
}

// parameter_count() sums the parameters; the fronts differ by the table (vocab x emb) against the bottleneck
// (N x emb + emb), so a projection model's count does not grow with the vocabulary.
TEST(PqrnnClassifier, ParameterCountsOfBothFronts) {
    for (const int64_t vocab : {10, 30000}) {
        lm::ClassifierShape shape;
        shape.stack.model = "qrnn-bidir", shape.stack.pooling = "fo", shape.stack.window = 2, shape.stack.input = 32;
        shape.stack.hidden = 64, shape.stack.layers = 2, shape.vocab = vocab;
        lm::SequenceClassifier emb(shape, {4, 8});
        shape.front = "projection";
        lm::SequenceClassifier proj(shape, {4, 8});
        int64_t sum = 0;
        for (const nn::Param &p : proj.params()) sum += static_cast<int64_t>(p.value->size());
        EXPECT_EQ(proj.parameter_count(), sum);
        EXPECT_EQ(proj.parameter_count() - emb.parameter_count(), 512 * 32 + 32 - vocab * 32);
        std::cout << "vocab " << vocab << ", emb 32, qrnn-bidir 2 x 64: embedding front " << emb.parameter_count()
                  << " parameters, projection front (N 512) " << proj.parameter_count() << " (embedding / projection "
                  << static_cast<double>(emb.parameter_count()) / static_cast<double>(proj.parameter_count()) << ")\n";
    }
}

// The CLI's keys: one-line errors naming key and value; a projection checkpoint resumes, and is refused under
// another N or seed.
TEST(PqrnnClassifier, TrainKeysErrorsAndCheckpointIdentity) {
    expect_cli("train --task classify --front hashing", 2, "--front: key 'front': value 'hashing': must be one of embedding, projection");
    expect_cli("train --task classify --front projection --projection_features 0", 2,
               "--projection_features: key 'projection_features': value '0': must be >= 1");
    expect_cli("train --task classify --front projection --projection_features 4097", 2,
               "--projection_features: key 'projection_features': value '4097': must be <= 4096");
    expect_cli("train --task classify --front projection --projection_seed -1", 2,
               "--projection_seed: key 'projection_seed': value '-1': not a non-negative integer");
    expect_cli("train --task classify --front projection --projection_seed 18446744073709551616", 2,
               "--projection_seed: key 'projection_seed': value '18446744073709551616': must be in [0, 2^64)");
    expect_cli("train --task classify --projection_features 64", 2,
               "key 'projection_features': value '64': front embedding does not use it (front projection only)");
    expect_cli("train --task sort --front projection", 2, "key 'front': value 'projection': task sort does not use it (tasks classify and classify-text only)");
    expect_cli("train --train a.txt --valid b.txt --projection_seed 3", 2,
               "key 'projection_seed': value '3': task lm does not use it (tasks classify and classify-text only)");

    auto args = [](const std::string &checkpoint, int features, const std::string &seed) {
        return "train --task classify --front projection --projection_features " + std::to_string(features) +
               " --projection_seed " + seed + " --pool max --model lstm-onednn --emb 6 --hidden 8 --layers 1 --batch 4"
               " --max_len 8 --epochs 1 --max_batches 2 --eval_size 8 --log_seconds 1000 --checkpoint " + checkpoint;
    };
    const std::string checkpoint = scratch_path("pqrnn.h5");
    CliResult first = run_cli(args(checkpoint, 16, "18446744073709551615"));
    ASSERT_EQ(first.exit_code, 0) << first.output;
    EXPECT_NE(first.output.find("(front projection N=16 seed=18446744073709551615, pool max)"), std::string::npos) << first.output;
    CliResult again = run_cli(args(checkpoint, 16, "18446744073709551615"));
    EXPECT_EQ(again.exit_code, 0) << again.output;
    EXPECT_NE(again.output.find("resuming from " + checkpoint), std::string::npos) << again.output;
    expect_cli(args(checkpoint, 17, "18446744073709551615"), 2,
               "checkpoint of another configuration (key 'projection_features' is '16' there, '17' here)");
    expect_cli(args(checkpoint, 16, "0"), 2,
               "checkpoint of another configuration (key 'projection_seed' is '18446744073709551615' there, '0' here)");
}

// `qrnn plugins` lists pQRNN (kind classifier) with its fronts, pools, stack models, passes and precision; the kind
// filters to it alone and is among the known kinds.
TEST(PqrnnClassifier, ListedByQrnnPlugins) {
    for (const std::string args : {"plugins", "plugins --kind classifier"}) {
        const CliResult r = run_cli(args);
        EXPECT_EQ(r.exit_code, 0) << r.output;
        for (const char *want : {"classifier", "pqrnn", "passes=inference+training precision=f32,bf16(the stack",
                                 "fronts=embedding,projection", "pools=mean,last,max,attention", "tasks=classify,classify-text",
                                 "models=", "qrnn-bidir", "projection_features", "teacher,distill_weight"})
            EXPECT_NE(r.output.find(want), std::string::npos) << args << ": no '" << want << "' in\n" << r.output;
    }
    const CliResult only = run_cli("plugins --kind classifier");
    EXPECT_EQ(only.output.find("chunked-scan"), std::string::npos) << only.output;
    expect_cli("plugins --kind nonsense", 2, "known: pooling, model, schedule, classifier");
}

}  // namespace qrnn::test
