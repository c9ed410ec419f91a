// The Halide training pipelines (forward with tape + hand-written backward, core/qrnn_backward.h) of every
// CPU training schedule, through nn::QrnnLayer and nn::LayerStack, against the double reference backward
// (itself checked by finite differences in test_reference_backward.cpp): every gradient of the stack, on
// awkward shapes (T = 1, B = 1, widths not multiples of the vector, k > T, 2-3 layers) with zoneout and
// dropout on, from a non-zero carried state. Tolerance: 1e-4 relative (max-norm, float vs double).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <iostream>

#include "core/error.h"
#include "nn/qrnn_layer.h"
#include "nn/stack.h"
#include "runtime/compare.h"
#include "schedules/cpu_target.h"
#include "tests/support/gradcheck.h"

namespace qrnn::test {
namespace {
constexpr double kTolerance = 1e-4;

struct Shape {
    int64_t T, B, n, m, k, L;
};
const Shape kShapes[] = {{1, 1, 1, 1, 1, 1}, {1, 2, 3, 5, 3, 2}, {14, 1, 5, 3, 2, 3},
                         {3, 3, 2, 7, 4, 2}, {9, 2, 20, 33, 2, 2}, {13, 3, 17, 40, 1, 1}};

ModelConfig config(const std::string &pooling, const std::string &schedule, const Shape &s) {
    ModelConfig c;
    c.pooling = pooling, c.schedule = schedule;
    c.seq = s.T, c.batch = s.B, c.input = s.n, c.hidden = s.m, c.window = s.k, c.layers = s.L;
    c.stochastic = true, c.zoneout = 0.3, c.dropout = 0.25, c.seed = 11;
    return c;
}

// The stack's float gradients of the problem, named as named_grads does.
struct FloatGrads {
    Tensor<float> dx;
    std::vector<nn::State> d_initial;
    std::vector<std::vector<nn::Param>> params;
};

double compare_all(const GradProblem &p, const ref::StackGrads &ref, nn::LayerStack &stack, const FloatGrads &g,
                   std::string &worst) {
    double max_rel = 0;
    auto check = [&](const std::string &name, const Tensor<float> &y, const Tensor<double> &r) {
        Comparison c = compare(y, r);
        // An all-zero reference (history when k = 1) is compared absolutely.
        double rel = c.finite ? c.rel() : 1e30;
        if (rel > max_rel) max_rel = rel, worst = name;
    };
    check("dx", g.dx, ref.dx);
    for (size_t l = 0; l < stack.size(); l++) {
        const std::string layer = "layer_" + std::to_string(l) + "/";
        for (auto &param : stack.layer(l).params())
            check(layer + param.name, *param.grad, param.name == "weights" ? ref.layers[l].dweights : ref.layers[l].dbias);
        check(layer + "c0", g.d_initial[l].at("c"), ref.layers[l].dc0);
        check(layer + "history", g.d_initial[l].at("history"), ref.layers[l].dhistory);
    }
    (void)p;
    return max_rel;
}

// reference_precision: the reference's, when not the layer's.
double halide_vs_reference(const ModelConfig &cfg, std::string &worst, const std::string &reference_precision = "") {
    GradProblem p = make_grad_problem(cfg);
    ModelConfig ref_cfg = cfg;
    if (!reference_precision.empty()) ref_cfg.precision = reference_precision;
    ref::StackGrads ref = ref::stack_backward(ref_cfg, p.params, p.x, p.state, p.dh, p.dc_T);

    nn::LayerStack stack(cfg);
    auto params = float_params(p);
    StackState<float> state0 = float_state(p);
    std::vector<nn::State> states, d_final;
    for (size_t l = 0; l < stack.size(); l++) {
        for (auto &param : stack.layer(l).params()) *param.value = param.name == "weights" ? params[l].weights : params[l].bias;
        states.push_back(nn::make_state(state0.layers[l], state0.time));
        nn::State d = stack.layer(l).initial_state(cfg.batch);
        d.at("c") = convert<float>(leading_row(p.dc_T, static_cast<int64_t>(l)));
        d_final.push_back(std::move(d));
    }
    stack.zero_grads();
    nn::Tapes tapes = stack.make_tapes();
    stack.forward(convert<float>(p.x), states, &tapes);
    FloatGrads g;
    stack.backward(tapes, convert<float>(p.dh), &d_final, &g.dx, &g.d_initial);
    return compare_all(p, ref, stack, g, worst);
}

}  // namespace

class HalideBackward : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(HalideBackward, MatchesReferenceGradients) {
    load_example_plugin();
    auto [schedule, pooling] = GetParam();
    double max_rel = 0;
    for (const Shape &s : kShapes) {
        ModelConfig cfg = config(pooling, schedule, s);
        std::string worst;
        double rel = halide_vs_reference(cfg, worst);
        EXPECT_LE(rel, kTolerance) << cfg.describe() << ": worst " << worst;
        max_rel = std::max(max_rel, rel);
    }
    std::cout << schedule << " " << pooling << ": worst rel err vs reference gradients " << max_rel << "\n";
}

// bf16 (docs/precision.md) against the reference whose GEMM operands (input, weights, dpre) are rounded alike. dpre
// and the layers' outputs are float32 here and double there: where one lies within that difference of a bf16
// rounding boundary, the two round a whole step (2^-8 relative) apart, so the bound is looser than float32's.
// fo and ifo (two and three gates, an output gate or not); the GEMMs are the same code for f's two.
TEST(HalideBackward, Bf16MatchesTheRoundedReference) {
    double max_rel = 0;
    for (const Shape &s : kShapes)
        for (const char *pooling : {"fo", "ifo"}) {
            ModelConfig cfg = config(pooling, "tuned", s);
            cfg.precision = "bf16";
            std::string worst;
            const double rel = halide_vs_reference(cfg, worst);
            EXPECT_LE(rel, 5e-4) << cfg.describe() << ": worst " << worst;  // measured 5.7e-5
            max_rel = std::max(max_rel, rel);
        }
    std::cout << "bf16: worst rel err vs the rounded reference's gradients " << max_rel << "\n";
}

// The bf16 step's gradients against the f32 reference's: within a few bf16 steps (2^-8) of the largest gradient
// (each GEMM operand within 2^-9 of its value, a product within 2^-8, dpre itself perturbed by the forward's gates),
// and farther than float32 gets (the operands were rounded).
TEST(HalideBackward, Bf16GradientsAreWithinBf16RoundingOfTheF32Ones) {
    for (const Shape &s : {Shape{9, 2, 20, 33, 2, 2}, Shape{13, 3, 17, 40, 1, 1}, Shape{32, 4, 64, 64, 2, 1}})
        for (const char *pooling : {"fo", "ifo"}) {
            ModelConfig cfg = config(pooling, "tuned", s);
            cfg.precision = "bf16";
            std::string worst;
            const double rel = halide_vs_reference(cfg, worst, "f32");
            EXPECT_LE(rel, 4 * std::ldexp(1.0, -8)) << cfg.describe() << ": worst " << worst;
            EXPECT_GT(rel, kTolerance) << cfg.describe() << ": bf16 ran as f32";
            std::cout << cfg.describe() << ": bf16 vs f32 gradients, worst rel err " << rel << " (" << worst << ")\n";
        }
}

// Every CPU training schedule; the tuned one with every pooling but f, which the naive one takes (each
// (schedule, pooling) is a JIT compile of two pipelines: the test's time).
INSTANTIATE_TEST_SUITE_P(Tuned, HalideBackward,
                         ::testing::Combine(::testing::Values("tuned"), ::testing::Values("fo", "ifo", "fo-tanh")));
INSTANTIATE_TEST_SUITE_P(Naive, HalideBackward, ::testing::Combine(::testing::Values("naive"), ::testing::Values("f")));

// The tuned training schedule on every lower target this CPU runs (SSE4.1, and AVX2 on an AVX-512 machine),
// each with its target-aware register tiles.
TEST(HalideBackward, LowerTargetsMatchReference) {
    for (const Halide::Target &target : runnable_cpu_targets()) {
        if (target_isa(target) == target_isa(Halide::get_host_target())) continue;
        for (const Shape &s : {kShapes[1], kShapes[4]}) {
            ModelConfig cfg = config("ifo", "tuned", s);
            cfg.target = target.to_string();
            std::string worst;
            EXPECT_LE(halide_vs_reference(cfg, worst), kTolerance) << cfg.target << " " << cfg.describe() << ": worst " << worst;
        }
    }
}

// Odd widths take tiles that pad m the least (the tuned schedule's width_defaults: m = 77 with AVX-512 5 x 4, m = 72
// with AVX2 3 x 4), on every target this CPU runs; each width here changes some tile from the target's.
TEST(HalideBackward, WidthChosenTilesMatchReference) {
    const TrainingSchedule &tuned = find_training_schedule("tuned");
    for (const Halide::Target &target : runnable_cpu_targets())
        for (int64_t m : {77, 72}) {
            if (merge_knobs_for_width(tuned, {}, m, target) == merge_knobs(tuned, {}, target)) continue;
            ModelConfig cfg = config("fo", "tuned", {7, 3, 20, m, 2, 1});
            cfg.target = target.to_string();
            std::string worst;
            EXPECT_LE(halide_vs_reference(cfg, worst), kTolerance) << cfg.target << " " << cfg.describe() << ": worst " << worst;
        }
}

// m = 64, which every target's forward h tile divides: no panel of the packed weights (ConvFuncs::weights_packed)
// reaches past m (the other shapes here clamp the last panel's rows). Every target this CPU runs.
TEST(HalideBackward, WidthTheTileDividesMatchesReference) {
    for (const Halide::Target &target : runnable_cpu_targets()) {
        ModelConfig cfg = config("fo", "tuned", {6, 3, 9, 64, 2, 2});
        cfg.target = target.to_string();
        std::string worst;
        EXPECT_LE(halide_vs_reference(cfg, worst), kTolerance) << cfg.target << " " << cfg.describe() << ": worst " << worst;
    }
}

// A larger shape (several GEMM tiles, vector tails) with the tuned schedule.
TEST(HalideBackward, PaperLikeShapeMatchesReference) {
    ModelConfig cfg = config("fo", "tuned", {16, 4, 70, 45, 2, 2});
    std::string worst;
    EXPECT_LE(halide_vs_reference(cfg, worst), kTolerance) << worst;
}

// dW's parallel tasks over groups of h tiles with a short last group (schedule_dweights_blocked): k = 1 with 3 gates
// makes 3 (j, gate) tasks, so the h tiles are split in two groups for 2 cores (m = 150: 3 tiles of 64 with AVX-512,
// 10 of 16 with AVX2, 19 of 8 with SSE4.1, the last tile short); n = 700 makes 150 x 700 more than half of L2 on
// AVX-512, so groups split by size too, and n = 700 and 1400 split c into groups of dW's accumulators (2 and 3 with
// AVX-512 and a 1 MB L2, 1 and 2 with AVX2); n = 700 with a 1 MB L2, n = 1400 with up to 2 MB, make dX's K blocks two of
// 75 h (the weights panel's bound, not the L2 rule's one block: schedule_dinput_blocked). Every target this CPU runs.
TEST(HalideBackward, DweightsTaskGroupsMatchReference) {
    for (const Halide::Target &target : runnable_cpu_targets())
        for (int64_t n : {20, 700, 1400}) {
            ModelConfig cfg = config("fo", "tuned", {3, 2, n, 150, 1, 1});
            cfg.target = target.to_string();
            std::string worst;
            EXPECT_LE(halide_vs_reference(cfg, worst), kTolerance) << cfg.target << " " << cfg.describe() << ": worst " << worst;
        }
}

// The check is not vacuous: perturbing one gradient element of the float result fails it.
TEST(HalideBackward, PerturbedGradientFailsTheComparison) {
    ModelConfig cfg = config("fo", "tuned", kShapes[3]);
    GradProblem p = make_grad_problem(cfg);
    ref::StackGrads ref = ref::stack_backward(cfg, p.params, p.x, p.state, p.dh, p.dc_T);
    Tensor<float> dw = convert<float>(ref.layers[0].dweights);
    EXPECT_LE(compare(dw, ref.layers[0].dweights).rel(), 1e-6);
    dw.data[1] += 1e-2f;
    EXPECT_GT(compare(dw, ref.layers[0].dweights).rel(), kTolerance);
}

TEST(HalideBackward, ForwardOnlyScheduleIsRefused) {
    ModelConfig cfg = config("fo", "fused", kShapes[0]);
    EXPECT_THROW(
        {
            try {
                nn::LayerStack stack(cfg);  // an inference stack needs no training schedule; a trainer's does
                stack.prepare_training();
            } catch (const Error &e) {
                EXPECT_NE(std::string(e.what()).find("schedule 'fused' has no training (backward) schedule"), std::string::npos)
                    << e.what();
                throw;
            }
        },
        Error);
}

}  // namespace qrnn::test
