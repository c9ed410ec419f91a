// Bad input through the C++ API: each a qrnn::Error whose message names the problem.
#include <gtest/gtest.h>

#include "core/error.h"
#include "plugins/model.h"
#include "nn/qrnn_layer.h"
#include "tests/support/error_text.h"

using namespace qrnn;

namespace {
using qrnn::test::error_of;
ModelConfig small() {
    ModelConfig c;
    c.window = 2, c.batch = 2, c.seq = 3, c.input = 4, c.hidden = 5;
    return c;
}
}  // namespace

TEST(Errors, ConfigValidationNamesOptionAndValue) {
    auto with = [](auto change) {
        ModelConfig c = small();
        change(c);
        return error_of([&] { validate_model_config(c); });
    };
    EXPECT_EQ(with([](ModelConfig &c) { c.window = 0; }), "--window must be >= 1 (got 0)");
    EXPECT_EQ(with([](ModelConfig &c) { c.batch = -4; }), "--batch must be >= 1 (got -4)");
    EXPECT_EQ(with([](ModelConfig &c) { c.seq = 0; }), "--seq must be >= 1 (got 0)");
    EXPECT_EQ(with([](ModelConfig &c) { c.hidden = 0; }), "--hidden must be >= 1 (got 0)");
    EXPECT_EQ(with([](ModelConfig &c) { c.layers = 0; }), "--layers must be >= 1 (got 0)");
    EXPECT_EQ(with([](ModelConfig &c) { c.zoneout = 1.0; }), "--zoneout must be in [0, 1) (got 1)");
    EXPECT_EQ(with([](ModelConfig &c) { c.dropout = -0.1; }), "--dropout must be in [0, 1) (got -0.1)");
    EXPECT_EQ(with([](ModelConfig &c) { c.pooling = "xyz"; }).rfind("unknown pooling 'xyz' (known: ", 0), 0u);
    EXPECT_EQ(with([](ModelConfig &c) {}), "<no error>");
}

TEST(Errors, UnknownScheduleListsKnownOnes) {
    EXPECT_NE(error_of([] { compiled_layer(find_pooling("fo"), "warp-drive"); }).find("unknown schedule 'warp-drive' (known: "),
              std::string::npos);
}

TEST(Errors, MismatchedBufferShapesAreNamed) {
    ModelConfig cfg = small();
    auto params = init_params(cfg);
    auto state = initial_state<float>(cfg);
    Tensor<float> x = init_input(cfg), h({3, 2, 5}), c({3, 2, 5});
    auto layer = compiled_layer(find_pooling("fo"), "tuned");
    auto run = [&] { layer->run({&x, &state.layers[0], &params[0], {}, 0, &h, &c}); };
    EXPECT_EQ(error_of(run), "<no error>");

    auto bad_bias = params;
    bad_bias[0].bias = Tensor<float>({3, 6});
    EXPECT_EQ(error_of([&] { layer->run({&x, &state.layers[0], &bad_bias[0], {}, 0, &h, &c}); }),
              "layer bias has shape [3][6], expected [3][5]");
    auto two_gates = params;
    two_gates[0].weights = Tensor<float>({2, 2, 4, 5});
    EXPECT_EQ(error_of([&] { layer->run({&x, &state.layers[0], &two_gates[0], {}, 0, &h, &c}); }),
              "layer weights have 2 gates, pooling 'fo' needs 3");
    auto bad_state = state;
    bad_state.layers[0].c = Tensor<float>({1, 5});
    EXPECT_EQ(error_of([&] { layer->run({&x, &bad_state.layers[0], &params[0], {}, 0, &h, &c}); }),
              "layer c0 has shape [1][5], expected [2][5]");
    Tensor<float> short_h({2, 2, 5});
    EXPECT_EQ(error_of([&] { layer->run({&x, &state.layers[0], &params[0], {}, 0, &short_h, &c}); }),
              "layer h output has shape [2][2][5], expected [3][2][5]");

    nn::QrnnLayer qrnn_layer(cfg, 0);
    nn::State layer_state = qrnn_layer.initial_state(cfg.batch);
    Tensor<float> wrong_x({3, 2, 7}), y;
    EXPECT_EQ(error_of([&] { qrnn_layer.forward(wrong_x, layer_state, y, nullptr); }),
              "input x has shape [3][2][7], expected [T][2][4]");
}
