// The Halide layer (CPU schedule "tuned") against the double reference: every pooling, window 1..4,
// awkward shapes, zoneout and dropout, stacks, and stateful pieces vs the whole sequence.
// Tolerance: max|y - ref| / max|ref| <= 1e-5 (float32 vs float64; measured ~2e-6), in f32 and in bf16 (against the
// reference with the same operands rounded; tests/test_bf16.cpp has the rest of bf16).
#include <gtest/gtest.h>

#include "reference/reference.h"
#include "harness/experiment.h"
#include "nn/stack.h"
#include "tests/support/verified_run.h"

using namespace qrnn;
using qrnn::test::verified_error;

namespace {
constexpr double kTolerance = 1e-5;

struct Shape {
    int64_t T, B, n, m;
};
// T=1, B=1, widths below/above/not multiples of the 16-lane vector, k > T (k up to 4 with T = 1, 3).
const Shape kShapes[] = {{1, 1, 1, 1}, {1, 3, 5, 17}, {3, 1, 7, 33}, {5, 2, 16, 16}, {9, 4, 20, 40}, {2, 1, 33, 3}};

ModelConfig config(const std::string &pooling, int64_t k, const Shape &s) {
    ModelConfig c;
    c.pooling = pooling;
    c.window = k, c.seq = s.T, c.batch = s.B, c.input = s.n, c.hidden = s.m;
    return c;
}

}  // namespace

// bf16 (docs/precision.md) against the reference with the same operands rounded: f32's tolerance too.
class LayerMatrix : public ::testing::TestWithParam<std::tuple<std::string, int, std::string>> {};

TEST_P(LayerMatrix, MatchesReferenceOnAwkwardShapes) {
    auto [pooling, k, precision] = GetParam();
    for (const Shape &s : kShapes) {
        ModelConfig cfg = config(pooling, k, s);
        cfg.precision = precision;
        EXPECT_LE(verified_error(cfg), kTolerance) << cfg.describe();
    }
}

INSTANTIATE_TEST_SUITE_P(AllPoolings, LayerMatrix,
                         ::testing::Combine(::testing::Values("f", "fo", "ifo"), ::testing::Values(1, 2, 3, 4),
                                            ::testing::Values("f32", "bf16")));

TEST(Layer, PaperShapeMatchesReference) {
    EXPECT_LE(verified_error(config("fo", 2, {32, 4, 320, 320})), kTolerance);
}

TEST(Layer, TrainingStackWithZoneoutAndDropoutMatchesReference) {
    for (const char *pooling : {"f", "fo", "ifo"}) {
        ModelConfig cfg = config(pooling, 3, {11, 3, 9, 21});
        cfg.layers = 3, cfg.stochastic = true, cfg.zoneout = 0.5, cfg.dropout = 0.3, cfg.seed = 42;
        EXPECT_LE(verified_error(cfg), kTolerance) << cfg.describe();
    }
}

namespace {
Tensor<float> forward_once(const ModelConfig &cfg) {
    nn::LayerStack stack(cfg);
    std::vector<nn::State> states = stack.initial_state(cfg.batch);
    return stack.forward(init_input(cfg), states, nullptr);
}

}  // namespace

TEST(Layer, ZoneoutOnlyActsInTraining) {
    ModelConfig eval = config("fo", 2, {16, 2, 8, 19});
    ModelConfig eval_zoneout = eval;
    eval_zoneout.zoneout = 0.5;
    ModelConfig train = eval_zoneout;
    train.stochastic = true;
    Tensor<float> a = forward_once(eval), b = forward_once(eval_zoneout), c = forward_once(train);
    EXPECT_EQ(a.data, b.data);  // eval: zoneout rate ignored
    EXPECT_NE(a.data, c.data);  // train: masks change the result (and the reference agrees, above)
    EXPECT_EQ(forward_once(train).data, c.data);  // same seed -> same masks -> same output
}

TEST(Layer, StatefulPiecesEqualWholeSequence) {
    for (const char *pooling : {"f", "fo", "ifo"}) {
        for (int64_t k : {1, 2, 4}) {
            ModelConfig cfg = config(pooling, k, {10, 3, 6, 18});
            cfg.layers = 2, cfg.stochastic = true, cfg.zoneout = 0.3, cfg.dropout = 0.2;
            nn::LayerStack stack(cfg);
            Tensor<float> x = init_input(cfg);
            std::vector<nn::State> whole_state = stack.initial_state(cfg.batch);
            Tensor<float> whole = stack.forward(x, whole_state, nullptr), whole_cT = nn::stacked_state(whole_state, "c");

            std::vector<nn::State> state = stack.initial_state(cfg.batch);
            std::vector<float> pieces;
            Tensor<float> last_cT;
            for (auto [first, count] : {std::pair{0, 1}, {1, 2}, {3, 1}, {4, 6}}) {
                const Tensor<float> &h = stack.forward(leading_rows(x, first, count), state, nullptr);
                pieces.insert(pieces.end(), h.data.begin(), h.data.end());
                last_cT = nn::stacked_state(state, "c");
            }
            EXPECT_EQ(state[0].time, 10);
            EXPECT_EQ(pieces, whole.data) << cfg.describe();  // bit-identical: same arithmetic per element
            EXPECT_EQ(last_cT.data, whole_cT.data) << cfg.describe();
        }
    }
}
