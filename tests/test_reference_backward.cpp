// The double reference backward (reference/qrnn_backward.h) against central finite differences of
// L = sum(dh * h) + sum(dc_T * c_T) in double, for every gradient (input, weights, bias, c0, history of
// every layer) on awkward shapes, every pooling (fo-tanh from the example plugin), zoneout and dropout on.
// Tolerance: 1e-6 relative (measured ~1e-9). Deliberately broken gradients must fail the same check.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>

#include "core/error.h"
#include "tests/support/gradcheck.h"

namespace qrnn::test {
namespace {
constexpr double kTolerance = 1e-6;

struct Shape {
    int64_t T, B, n, m, k, L;
};
// T = 1, B = 1, odd widths, k > T, 1-3 layers.
const Shape kShapes[] = {{1, 1, 1, 1, 1, 1}, {1, 2, 3, 5, 3, 2}, {4, 1, 5, 3, 2, 3}, {3, 3, 2, 7, 4, 2}, {6, 2, 4, 4, 2, 1}};

ModelConfig config(const std::string &pooling, const Shape &s, bool stochastic) {
    ModelConfig c;
    c.pooling = pooling;
    c.seq = s.T, c.batch = s.B, c.input = s.n, c.hidden = s.m, c.window = s.k, c.layers = s.L;
    c.stochastic = stochastic, c.zoneout = stochastic ? 0.4 : 0, c.dropout = stochastic ? 0.3 : 0, c.seed = 7;
    return c;
}

FdResult check(const ModelConfig &cfg) {
    GradProblem p = make_grad_problem(cfg);
    ref::StackGrads g = ref::stack_backward(cfg, p.params, p.x, p.state, p.dh, p.dc_T);
    return finite_difference_check(p, g);
}

}  // namespace

class ReferenceBackward : public ::testing::TestWithParam<std::tuple<std::string, bool>> {};

TEST_P(ReferenceBackward, MatchesFiniteDifferences) {
    load_example_plugin();
    auto [pooling, stochastic] = GetParam();
    double worst = 0;
    for (const Shape &s : kShapes) {
        ModelConfig cfg = config(pooling, s, stochastic);
        FdResult r = check(cfg);
        EXPECT_LE(r.rel, kTolerance) << cfg.describe() << ": worst " << r.worst;
        worst = std::max(worst, r.rel);
    }
    std::cout << pooling << (stochastic ? " (zoneout, dropout)" : "") << ": worst rel err vs finite differences "
              << worst << "\n";
}

INSTANTIATE_TEST_SUITE_P(EveryPooling, ReferenceBackward,
                         ::testing::Combine(::testing::Values("f", "fo", "ifo", "fo-tanh"), ::testing::Bool()));

TEST(ReferenceBackward, MasksAreActuallyOn) {
    // The stochastic cases above differ from the deterministic ones (else they would test nothing new).
    ModelConfig on = config("fo", kShapes[3], true), off = config("fo", kShapes[3], false);
    EXPECT_NE(stack_loss(make_grad_problem(on)), stack_loss(make_grad_problem(off)));
}

// A perturbed gradient (one weight element) fails the check.
TEST(ReferenceBackward, PerturbedGradientFails) {
    ModelConfig cfg = config("ifo", kShapes[3], true);
    GradProblem p = make_grad_problem(cfg);
    ref::StackGrads g = ref::stack_backward(cfg, p.params, p.x, p.state, p.dh, p.dc_T);
    ASSERT_LE(finite_difference_check(p, g).rel, kTolerance);
    g.layers[1].dweights.data[3] += 1e-3;
    FdResult r = finite_difference_check(p, g);
    EXPECT_GT(r.rel, 100 * kTolerance);
    EXPECT_EQ(r.worst, "layer_1/weights");
}

// A variant whose backward drops one term (dout/dc of h = o*c) fails the check: the check sees the partials.
TEST(ReferenceBackward, VariantWithWrongPartialFails) {
    static const bool registered = [] {
        PoolingVariant v = find_pooling("fo");
        v.name = "fo-wrong-backward";
        auto right = v.reference_partials;
        v.reference_partials = [right](const double *g, double c) {
            auto p = right(g, c);
            p.dout_dc = 0;  // the dropped term
            return p;
        };
        register_pooling(v);
        return true;
    }();
    (void)registered;
    FdResult r = check(config("fo-wrong-backward", kShapes[2], false));
    EXPECT_GT(r.rel, 1e-2) << r.worst;
}

TEST(ReferenceBackward, VariantWithoutBackwardIsRefused) {
    static const bool registered = [] {
        PoolingVariant v = find_pooling("fo");
        v.name = "fo-forward-only-test";
        v.halide_partials = nullptr;
        v.reference_partials = nullptr;
        register_pooling(v);
        return true;
    }();
    (void)registered;
    ModelConfig cfg = config("fo-forward-only-test", kShapes[1], false);
    GradProblem p = make_grad_problem(cfg);
    try {
        ref::stack_backward(cfg, p.params, p.x, p.state, p.dh, p.dc_T);
        FAIL() << "no error";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("pooling variant 'fo-forward-only-test' has no backward pass"),
                  std::string::npos)
            << e.what();
    }
}

TEST(ReferenceBackward, HalfBackwardIsRejectedAtRegistration) {
    PoolingVariant v = find_pooling("fo");
    v.name = "fo-half-backward-test";
    v.halide_partials = nullptr;
    EXPECT_THROW(register_pooling(v), Error);
}

}  // namespace qrnn::test
