// The baselines' double-precision reference backward (reference/baselines_backward.h) against central finite
// differences in double on awkward shapes (T = 1, B = 1, odd widths, k > T, 2-3 layers), rel <= 1e-6; and a
// deliberately broken gradient must fail the same check.
#include <gtest/gtest.h>

#include "plugins/lstm_params.h"
#include "reference/baselines_backward.h"
#include "tests/support/finite_differences.h"

namespace qrnn {
namespace {
using test::dot;
using test::seeded_tensor;
using Pairs = std::vector<std::pair<std::string, std::pair<Tensor<double> *, const Tensor<double> *>>>;

constexpr double kFdTolerance = 1e-6;

// Every analytic gradient of `pairs`, with one element off by 1e-4 of its largest entry, fails the check.
void expect_one_wrong_element_fails(const Pairs &pairs, const std::function<double()> &loss) {
    for (auto &[name, pair] : pairs) {
        Tensor<double> bad = *pair.second;
        double largest = 0;
        for (double v : bad.data) largest = std::max(largest, std::abs(v));
        bad.data[bad.size() / 2] += 1e-4 * largest;
        EXPECT_GT(test::finite_difference_error(*pair.first, bad, loss), kFdTolerance) << name;
    }
}

struct Shape {
    int64_t T, B, n, m, L, k = 1;
};

// ---- LSTM ----------------------------------------------------------------------------------------------
struct LstmProblem {
    Tensor<double> x, h0, c0, dh, dh_T, dc_T;
    std::vector<LstmParams<double>> layers;

    explicit LstmProblem(const Shape &s) {
        ModelConfig cfg;
        cfg.seq = s.T, cfg.batch = s.B, cfg.input = s.n, cfg.hidden = s.m, cfg.layers = s.L, cfg.seed = 3;
        LstmData d = init_lstm_data(cfg);
        x = convert<double>(d.x), h0 = convert<double>(d.h0), c0 = convert<double>(d.c0);
        for (auto &p : d.layers)
            layers.push_back({convert<double>(p.w_input), convert<double>(p.w_recurrent), convert<double>(p.bias)});
        dh = seeded_tensor({s.T, s.B, s.m}, 3, 0x30000);
        dh_T = seeded_tensor({s.L, s.B, s.m}, 3, 0x30001);
        dc_T = seeded_tensor({s.L, s.B, s.m}, 3, 0x30002);
    }
    double loss() const {
        ref::LstmOutput out = ref::lstm_stack_forward(x, layers, h0, c0);
        return dot(dh, out.h) + dot(dh_T, out.h_T) + dot(dc_T, out.c_T);
    }
    Pairs pairs(const ref::LstmStackGrads &g) {
        Pairs v{{"x", {&x, &g.dx}}, {"h0", {&h0, &g.dh0}}, {"c0", {&c0, &g.dc0}}};
        for (size_t l = 0; l < layers.size(); l++) {
            const std::string p = "layer_" + std::to_string(l) + "/";
            v.push_back({p + "w_input", {&layers[l].w_input, &g.layers[l].w_input}});
            v.push_back({p + "w_recurrent", {&layers[l].w_recurrent, &g.layers[l].w_recurrent}});
            v.push_back({p + "bias", {&layers[l].bias, &g.layers[l].bias}});
        }
        return v;
    }
    ref::LstmStackGrads backward() const { return ref::lstm_stack_backward(x, layers, h0, c0, dh, dh_T, dc_T); }
};

const Shape kLstmShapes[] = {{1, 1, 1, 1, 1}, {1, 2, 3, 5, 2}, {4, 1, 3, 2, 3}, {3, 2, 5, 3, 2}, {5, 3, 2, 7, 1}};

TEST(LstmReferenceBackward, FiniteDifferences) {
    for (const Shape &s : kLstmShapes) {
        LstmProblem p(s);
        ref::LstmStackGrads g = p.backward();
        test::FdWorst worst = test::finite_difference_check(p.pairs(g), [&] { return p.loss(); });
        EXPECT_LE(worst.rel, kFdTolerance) << worst.name << " T=" << s.T << " B=" << s.B << " n=" << s.n << " m=" << s.m
                                           << " L=" << s.L;
    }
}

// One wrong element in any gradient (1e-4 of its largest entry), or two gates swapped, fails the check.
TEST(LstmReferenceBackward, BrokenGradientFails) {
    LstmProblem p({3, 2, 5, 3, 2});
    const ref::LstmStackGrads good = p.backward();
    expect_one_wrong_element_fails(p.pairs(good), [&] { return p.loss(); });
    // Gates i and f swapped in d w_input (a layout mix-up).
    ref::LstmStackGrads swapped = good;
    Tensor<double> &dw = swapped.layers[0].w_input;
    for (int64_t c = 0; c < dw.dim(0); c++)
        for (int64_t u = 0; u < dw.dim(2); u++) std::swap(dw(c, kGateI, u), dw(c, kGateF, u));
    EXPECT_GT(test::finite_difference_error(p.layers[0].w_input, dw, [&] { return p.loss(); }), kFdTolerance);
}

// ---- CNN -----------------------------------------------------------------------------------------------
struct CnnProblem {
    Tensor<double> x, dy;
    std::vector<LayerParams<double>> layers;

    explicit CnnProblem(const Shape &s) {
        x = seeded_tensor({s.T, s.B, s.n}, 5, 0x30010);
        for (int64_t l = 0; l < s.L; l++) {
            const int64_t n = l == 0 ? s.n : s.m;
            layers.push_back({seeded_tensor({1, s.k, n, s.m}, 5, 0x30011 + 2 * l, 0.7),
                              seeded_tensor({1, s.m}, 5, 0x30012 + 2 * l, 0.5)});
        }
        dy = seeded_tensor({s.T, s.B, s.m}, 5, 0x30020);
    }
    double loss() const { return dot(dy, ref::cnn_forward(x, layers)); }
    Pairs pairs(const ref::CnnGrads &g) {
        Pairs v{{"x", {&x, &g.dx}}};
        for (size_t l = 0; l < layers.size(); l++) {
            const std::string p = "layer_" + std::to_string(l) + "/";
            v.push_back({p + "weights", {&layers[l].weights, &g.layers[l].weights}});
            v.push_back({p + "bias", {&layers[l].bias, &g.layers[l].bias}});
        }
        return v;
    }
};

const Shape kCnnShapes[] = {{1, 1, 1, 1, 1, 1}, {1, 2, 3, 5, 1, 3}, {4, 1, 3, 2, 3, 2},
                            {3, 2, 5, 3, 2, 5}, {6, 3, 2, 7, 1, 4}, {5, 2, 4, 3, 2, 1}};

TEST(CnnReferenceBackward, FiniteDifferences) {
    for (const Shape &s : kCnnShapes) {
        CnnProblem p(s);
        ref::CnnGrads g = ref::cnn_backward(p.x, p.layers, p.dy);
        test::FdWorst worst = test::finite_difference_check(p.pairs(g), [&] { return p.loss(); });
        EXPECT_LE(worst.rel, kFdTolerance) << worst.name << " T=" << s.T << " B=" << s.B << " n=" << s.n << " m=" << s.m
                                           << " L=" << s.L << " k=" << s.k;
    }
}

TEST(CnnReferenceBackward, BrokenGradientFails) {
    CnnProblem p({4, 2, 3, 5, 2, 3});
    const ref::CnnGrads good = ref::cnn_backward(p.x, p.layers, p.dy);
    expect_one_wrong_element_fails(p.pairs(good), [&] { return p.loss(); });
}

}  // namespace
}  // namespace qrnn
