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

TEST(Sgd, ClipsTheGlobalNormAfterWeightDecay) {
    TwoParams p;
    p.a.data = {0, 0};
    p.ga.data = {3, 0};
    p.b.data = {2};
    p.gb.data = {2};  // + decay 1 * 2 = 4: norm 5
    Sgd sgd({1.0, 1.0, 1.0});
    auto stats = sgd.step(p.params());
    EXPECT_NEAR(stats.grad_norm, 5.0, 1e-9);
    EXPECT_TRUE(stats.clipped);
    EXPECT_FLOAT_EQ(p.a.data[0], -0.6f);
    EXPECT_FLOAT_EQ(p.b.data[0], 2.0f - 0.8f);
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

// Adam's first step is lr * sign(gradient) (bias-corrected moments: m = g, v = g^2), with Sgd's weight decay and
// norm: the returned norm is after decay, before clipping; a diverged gradient throws.
TEST(Adam, FirstStepIsLrTimesTheSignAndSharesSgdsNorm) {
    TwoParams p;
    p.a.data = {1, 2};
    p.ga.data = {0.5f, -4};
    p.b.data = {3};
    p.gb.data = {-1.5f};  // + decay 0.5 * 3 = 0: no step
    Adam adam({/*lr=*/0.1, 0.9, 0.999, 1e-8, /*clip_norm=*/1.0, /*weight_decay=*/0.5});
    const double norm = adam.step(p.params());
    EXPECT_NEAR(norm, std::sqrt(1.0 + 3.0 * 3.0), 1e-6);  // a's gradients + 0.5 * (1, 2) = (1, -3)
    EXPECT_NEAR(p.a.data[0], 0.9f, 1e-6);
    EXPECT_NEAR(p.a.data[1], 2.1f, 1e-6);
    EXPECT_FLOAT_EQ(p.b.data[0], 3.0f);
    p.ga.data = {NAN, 0};
    EXPECT_THROW(adam.step(p.params()), Error);
    EXPECT_THROW(Adam({0.1, 1.0}), Error);  // beta1 must be < 1
}
