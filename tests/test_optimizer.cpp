// nn/optimizer: SGD with weight decay and global-norm clipping, and the plateau learning-rate decay.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "nn/optimizer.h"

using namespace qrnn;
using namespace qrnn::nn;

namespace {
struct TwoParams {
    Tensor<float> a{{2}}, ga{{2}}, b{{1}}, gb{{1}};
    std::vector<Param> params() { return {{"a", &a, &ga}, {"b", &b, &gb}}; }
};
}  // namespace

TEST(Sgd, StepsAgainstTheGradient) {
    TwoParams p;
    p.a.data = {1, 2};
    p.ga.data = {0.5f, -1};
    p.b.data = {3};
    p.gb.data = {0};
    Sgd sgd({/*lr=*/0.1, /*clip_norm=*/0, /*weight_decay=*/0});
    auto stats = sgd.step(p.params());
    EXPECT_NEAR(stats.grad_norm, std::sqrt(1.25), 1e-9);
    EXPECT_FALSE(stats.clipped);
    EXPECT_FLOAT_EQ(p.a.data[0], 0.95f);
    EXPECT_FLOAT_EQ(p.a.data[1], 2.1f);
    EXPECT_FLOAT_EQ(p.b.data[0], 3.0f);
}

// PyTorch's order: clip_grad_norm_ (factor clip / (norm + 1e-6)) on the gradient alone, then SGD's weight decay.
TEST(Sgd, ClipsTheGradientThenAddsWeightDecay) {
    TwoParams p;
    p.a.data = {0, 0};
    p.ga.data = {3, 0};
    p.b.data = {2};
    p.gb.data = {4};  // norm 5
    Sgd sgd({1.0, 1.0, 1.0});
    auto stats = sgd.step(p.params());
    EXPECT_NEAR(stats.grad_norm, 5.0, 1e-9);
    EXPECT_TRUE(stats.clipped);
    const double s = 1.0 / (5.0 + 1e-6);
    EXPECT_FLOAT_EQ(p.a.data[0], static_cast<float>(-3 * s));
    EXPECT_FLOAT_EQ(p.b.data[0], static_cast<float>(2.0 - 4 * s - 1.0 * 2.0));
}

// grad_scale turns the summed loss's gradient into the mean's: the norm, the clip and the step all see the scaled one.
TEST(Sgd, StepsOnTheScaledGradient) {
    TwoParams p, q;
    p.a.data = q.a.data = {1, -1};
    p.b.data = q.b.data = {0.5f};
    p.ga.data = {6, 0}, p.gb.data = {8};
    q.ga.data = {3, 0}, q.gb.data = {4};
    Sgd a({0.5, 2.0, 0.1}), b({0.5, 2.0, 0.1});
    EXPECT_NEAR(a.step(p.params(), 0.5).grad_norm, 5.0, 1e-9);
    EXPECT_NEAR(b.step(q.params()).grad_norm, 5.0, 1e-9);
    EXPECT_EQ(p.a.data, q.a.data);
    EXPECT_EQ(p.b.data, q.b.data);
    EXPECT_EQ(clip_scale(1.0, 0.0), 1.0);  // clip 0: off
    EXPECT_EQ(clip_scale(0.1, 0.25), 1.0);
}

TEST(Sgd, RefusesBadOptionsAndADivergedGradient) {
    EXPECT_THROW(Sgd({0.0, 0, 0}), Error);
    EXPECT_THROW(Sgd({1.0, -1, 0}), Error);
    EXPECT_THROW(Sgd({1.0, 0, -0.1}), Error);
    TwoParams p;
    p.ga.data = {std::nanf(""), 0};
    Sgd sgd({1.0, 0, 0});
    EXPECT_THROW(sgd.step(p.params()), Error);
}

TEST(PlateauDecay, DecaysAfterPatienceRunsOut) {
    Sgd sgd({8.0, 0, 0});
    PlateauDecay decay;
    decay.factor = 2;
    decay.patience = 1;
    EXPECT_FALSE(decay.observe(5.0, sgd));
    EXPECT_FALSE(decay.observe(4.0, sgd));
    EXPECT_FALSE(decay.observe(4.5, sgd));  // first bad epoch: within patience
    EXPECT_TRUE(decay.observe(4.2, sgd));   // second: decays
    EXPECT_DOUBLE_EQ(sgd.lr(), 4.0);
    EXPECT_FALSE(decay.observe(3.0, sgd));
    EXPECT_DOUBLE_EQ(decay.best, 3.0);
}

// AdamW's first step is lr * sign(gradient) (bias-corrected moments: m = g, v = g^2) after the decoupled decay
// value *= 1 - lr * weight_decay, whatever the clipping; the returned norm is before clipping; a diverged gradient throws.
TEST(Adam, FirstStepIsDecayThenLrTimesTheSign) {
    TwoParams p;
    p.a.data = {1, 2};
    p.ga.data = {0.5f, -4};
    p.b.data = {3};
    p.gb.data = {0};  // no gradient: the decay alone
    Adam adam({/*lr=*/0.1, 0.9, 0.999, 1e-8, /*clip_norm=*/1.0, /*weight_decay=*/0.5});
    const double norm = adam.step(p.params());
    EXPECT_NEAR(norm, std::sqrt(0.25 + 16.0), 1e-6);
    EXPECT_NEAR(p.a.data[0], 1 * 0.95f - 0.1f, 1e-6);
    EXPECT_NEAR(p.a.data[1], 2 * 0.95f + 0.1f, 1e-6);
    EXPECT_FLOAT_EQ(p.b.data[0], 3.0f * 0.95f);
    p.ga.data = {NAN, 0};
    EXPECT_THROW(adam.step(p.params()), Error);
    EXPECT_THROW(Adam({0.1, 1.0}), Error);  // beta1 must be < 1
}

// PyTorch's eps: added to sqrt(v) / sqrt(1 - b2^t), not to sqrt(v) (visible where |g| is near eps).
TEST(Adam, EpsIsAddedAfterTheBiasCorrection) {
    TwoParams p;
    p.a.data = {0, 0};
    p.ga.data = {1e-3f, 0};
    p.b.data = {0};
    p.gb.data = {0};
    Adam adam({1.0, 0.9, 0.999, /*eps=*/1e-3, 0.0, 0.0});
    adam.step(p.params());
    EXPECT_NEAR(p.a.data[0], -0.5, 1e-5);  // lr * g / (|g| + eps); eps inside the correction would give -0.003
}
