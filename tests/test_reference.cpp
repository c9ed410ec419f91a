// The double reference against values worked out by hand (the oracle the rest of the suite trusts).
#include <gtest/gtest.h>

#include <cmath>

#include "core/hash_rng.h"
#include "reference/reference.h"

using namespace qrnn;

namespace {
double sig(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// n = m = B = 1, k = 2, T = 2, x = [1, 2], history (time -1) = 0.5. Gate g, tap j weight = 0.1*(2g+j+1).
LayerParams<double> tiny_params(int G) {
    LayerParams<double> p{Tensor<double>({G, 2, 1, 1}), Tensor<double>({G, 1})};
    for (int g = 0; g < G; g++) {
        for (int j = 0; j < 2; j++) p.weights(g, j, 0, 0) = 0.1 * (2 * g + j + 1);
        p.bias(g, 0) = 0.01 * (g + 1);
    }
    return p;
}
Tensor<double> tiny_x() {
    Tensor<double> x({2, 1, 1});
    x(0, 0, 0) = 1;
    x(1, 0, 0) = 2;
    return x;
}
LayerState<double> tiny_state(double c0) {
    LayerState<double> s{Tensor<double>({1, 1, 1}, 0.5), Tensor<double>({1, 1}, c0)};
    return s;
}
// conv_g(t) = bias_g + w_g0 * x[t-1] + w_g1 * x[t]
double conv(int g, int t) {
    double prev = t == 0 ? 0.5 : 1.0, cur = t == 0 ? 1.0 : 2.0;
    return 0.01 * (g + 1) + 0.1 * (2 * g + 1) * prev + 0.1 * (2 * g + 2) * cur;
}
}  // namespace

TEST(Reference, MaskedConvMatchesHandValues) {
    Tensor<double> c = ref::masked_conv(tiny_x(), tiny_state(0).history, tiny_params(2));
    EXPECT_DOUBLE_EQ(c(0, 0, 0, 0), 0.01 + 0.1 * 0.5 + 0.2 * 1);  // 0.26
    EXPECT_DOUBLE_EQ(c(0, 0, 1, 0), 0.02 + 0.3 * 0.5 + 0.4 * 1);  // 0.57
    EXPECT_DOUBLE_EQ(c(1, 0, 0, 0), 0.01 + 0.1 * 1 + 0.2 * 2);    // 0.51
    EXPECT_DOUBLE_EQ(c(1, 0, 1, 0), 0.02 + 0.3 * 1 + 0.4 * 2);    // 1.12
}

TEST(Reference, FPoolingByHand) {
    auto out = ref::layer_forward(find_pooling("f"), tiny_x(), tiny_state(0.3), tiny_params(2), {}, 0);
    double h = 0.3;
    for (int t = 0; t < 2; t++) {
        double z = std::tanh(conv(0, t)), f = sig(conv(1, t));
        h = f * h + (1 - f) * z;
        EXPECT_NEAR(out.h(t, 0, 0), h, 1e-15);
        EXPECT_NEAR(out.c(t, 0, 0), h, 1e-15);
    }
}

TEST(Reference, FoPoolingByHand) {
    auto out = ref::layer_forward(find_pooling("fo"), tiny_x(), tiny_state(-0.2), tiny_params(3), {}, 0);
    double c = -0.2;
    for (int t = 0; t < 2; t++) {
        double z = std::tanh(conv(0, t)), f = sig(conv(1, t)), o = sig(conv(2, t));
        c = f * c + (1 - f) * z;
        EXPECT_NEAR(out.c(t, 0, 0), c, 1e-15);
        EXPECT_NEAR(out.h(t, 0, 0), o * c, 1e-15);
    }
}

TEST(Reference, IfoPoolingByHand) {
    auto out = ref::layer_forward(find_pooling("ifo"), tiny_x(), tiny_state(0.7), tiny_params(4), {}, 0);
    double c = 0.7;
    for (int t = 0; t < 2; t++) {
        double z = std::tanh(conv(0, t)), f = sig(conv(1, t)), o = sig(conv(2, t)), i = sig(conv(3, t));
        c = f * c + i * z;
        EXPECT_NEAR(out.c(t, 0, 0), c, 1e-15);
        EXPECT_NEAR(out.h(t, 0, 0), o * c, 1e-15);
    }
}

TEST(Reference, ZoneoutDroppedStepKeepsState) {
    // Rate ~1: every step is zoned out, so F = 1 and c never moves from c0.
    LayerMasks masks;
    masks.zoneout_key = 7;
    masks.zoneout_threshold = 0xFFFFFFFFu;
    auto out = ref::layer_forward(find_pooling("fo"), tiny_x(), tiny_state(0.25), tiny_params(3), masks, 0);
    uint32_t h0 = hash_at<uint32_t>(7, 0, 0, 0), h1 = hash_at<uint32_t>(7, 1, 0, 0);
    ASSERT_TRUE(h0 < 0xFFFFFFFFu && h1 < 0xFFFFFFFFu);
    EXPECT_DOUBLE_EQ(out.c(0, 0, 0), 0.25);
    EXPECT_DOUBLE_EQ(out.c(1, 0, 0), 0.25);
}

TEST(Reference, StackSplitEqualsWhole) {
    ModelConfig cfg;
    cfg.pooling = "ifo";
    cfg.window = 3, cfg.batch = 2, cfg.seq = 7, cfg.input = 3, cfg.hidden = 4, cfg.layers = 2;
    cfg.stochastic = true, cfg.zoneout = 0.4, cfg.dropout = 0.3;
    std::vector<LayerParams<double>> params = convert<double>(init_params(cfg));
    Tensor<double> x = convert<double>(init_input(cfg));
    auto whole_state = initial_state<double>(cfg);
    auto whole = ref::stack_forward(cfg, params, x, whole_state);
    auto state = initial_state<double>(cfg);
    ref::stack_forward(cfg, params, leading_rows(x, 0, 2), state);
    ref::stack_forward(cfg, params, leading_rows(x, 2, 1), state);
    auto last = ref::stack_forward(cfg, params, leading_rows(x, 3, 4), state);
    EXPECT_EQ(state.time, 7);
    for (int t = 0; t < 4; t++)
        for (int b = 0; b < 2; b++)
            for (int h = 0; h < 4; h++) EXPECT_DOUBLE_EQ(last.h(t, b, h), whole.h(t + 3, b, h));
    EXPECT_EQ(last.c_T.data, whole.c_T.data);
}
