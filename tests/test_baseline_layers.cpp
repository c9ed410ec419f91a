// The baselines' trainable layers (nn::make_layer: lstm-onednn, lstm-halide, cnn) against the double
// reference (reference/baselines_backward.h) on awkward shapes: T = 1, B = 1, widths that are not multiples
// of the vector size, k > T, a layer of a stack (input width = hidden). Forward output and final state,
// then every gradient (parameters, dx, d of the initial state), rel <= 1e-4; gradients accumulate.
#include <gtest/gtest.h>

#include "core/error.h"
#include "nn/layer.h"
#include "plugins/lstm_params.h"
#include "plugins/model.h"
#include "reference/baselines_backward.h"
#include "runtime/compare.h"
#include "tests/support/finite_differences.h"
#include "tests/support/param_name.h"

namespace qrnn {
namespace {
using test::seeded_tensor;

constexpr double kTolerance = 1e-4;

struct Shape {
    int64_t T, B, n, m, k = 1, layers = 1;  // the layer tested is the last of `layers`
};
// {23, 5, ...}: the weight-gradient GEMM reduces in chunks of 64 / B steps, here 12 + 11. m = 64: every CPU
// target's conv tile divides it, so the CNN reads its weights in place.
const Shape kShapes[] = {{1, 1, 1, 1},       {1, 3, 5, 17, 3}, {7, 1, 33, 9, 2},     {5, 3, 7, 19, 9},
                         {13, 2, 16, 33, 4}, {3, 9, 4, 40, 2}, {6, 2, 5, 17, 2, 2},  {4, 3, 19, 7, 3, 3},
                         {23, 5, 9, 21, 2},  {5, 2, 9, 64, 2}};

ModelConfig config(const std::string &model, const Shape &s) {
    ModelConfig cfg;
    cfg.model = model;
    cfg.seq = s.T, cfg.batch = s.B, cfg.input = s.n, cfg.hidden = s.m, cfg.window = s.k, cfg.layers = s.layers;
    cfg.seed = 11;
    return cfg;
}

Tensor<float> seeded_float(std::vector<int64_t> shape, uint32_t stream) {
    return convert<float>(seeded_tensor(std::move(shape), 11, stream));
}

void expect_close(const Tensor<float> &got, const Tensor<double> &want, const std::string &what, const Shape &s,
                  double scale = 1.0) {
    Tensor<double> scaled = want;
    for (double &v : scaled.data) v *= scale;
    Comparison c = compare(got, scaled);
    EXPECT_TRUE(c.finite) << what;
    EXPECT_GT(c.max_ref, 0.0) << what << ": reference is all zeros, the check would be vacuous";
    EXPECT_LE(c.rel(), kTolerance) << what << " T=" << s.T << " B=" << s.B << " n=" << s.n << " m=" << s.m
                                   << " k=" << s.k;
}

nn::Param param(nn::Layer &layer, const std::string &name) {
    for (auto &p : layer.params())
        if (p.name == name) return p;
    ADD_FAILURE() << "no parameter " << name;
    return {};
}

// ---- LSTM ----------------------------------------------------------------------------------------------
void check_lstm(const std::string &model, const Shape &s) {
    ModelConfig cfg = config(model, s);
    auto layer = nn::make_layer(cfg, s.layers - 1);
    const int64_t n = layer->input_size(), m = layer->output_size();
    ASSERT_EQ(m, s.m);
    Tensor<float> x = seeded_float({s.T, s.B, n}, 0x40000);
    nn::State state = layer->initial_state(s.B);
    state.at("h") = seeded_float({s.B, m}, 0x40001);
    state.at("c") = seeded_float({s.B, m}, 0x40002);
    const nn::State initial = state;
    auto tape = layer->make_tape();
    Tensor<float> y;
    layer->forward(x, state, y, tape.get());
    EXPECT_EQ(state.time, s.T);

    LstmParams<double> p{convert<double>(*param(*layer, "w_input").value),
                         convert<double>(*param(*layer, "w_recurrent").value), convert<double>(*param(*layer, "bias").value)};
    Tensor<double> xd = convert<double>(x), h0 = convert<double>(initial.at("h")), c0 = convert<double>(initial.at("c"));
    ref::LstmOutput fwd = ref::lstm_forward(xd, p, h0, c0);
    expect_close(y, fwd.h, model + " y", s);
    expect_close(state.at("h"), fwd.h_T, model + " h_T", s);
    expect_close(state.at("c"), fwd.c_T, model + " c_T", s);

    // Without a tape: the same output.
    nn::State again = initial;
    Tensor<float> y2;
    layer->forward(x, again, y2, nullptr);
    expect_close(y2, fwd.h, model + " y (no tape)", s);

    Tensor<float> dy = seeded_float({s.T, s.B, m}, 0x40003);
    nn::State d_final = layer->initial_state(s.B), d_initial = layer->initial_state(s.B);
    d_final.at("h") = seeded_float({s.B, m}, 0x40004);
    d_final.at("c") = seeded_float({s.B, m}, 0x40005);
    ref::LstmGrads g = ref::lstm_backward(xd, p, h0, c0, convert<double>(dy), convert<double>(d_final.at("h")),
                                          convert<double>(d_final.at("c")));
    layer->zero_grads();
    Tensor<float> dx;
    for (int pass = 1; pass <= 2; pass++) {  // the second pass accumulates: parameter gradients double
        layer->backward(*tape, dy, &d_final, &dx, &d_initial);
        const std::string what = model + " pass " + std::to_string(pass) + " ";
        expect_close(*param(*layer, "w_input").grad, g.params.w_input, what + "d w_input", s, pass);
        expect_close(*param(*layer, "w_recurrent").grad, g.params.w_recurrent, what + "d w_recurrent", s, pass);
        expect_close(*param(*layer, "bias").grad, g.params.bias, what + "d bias", s, pass);
        expect_close(dx, g.dx, what + "dx", s);
        expect_close(d_initial.at("h"), g.dh0, what + "d h0", s);
        expect_close(d_initial.at("c"), g.dc0, what + "d c0", s);
    }
    // Without d_final: as zeros.
    ref::LstmGrads g0 = ref::lstm_backward(xd, p, h0, c0, convert<double>(dy), Tensor<double>({s.B, m}),
                                           Tensor<double>({s.B, m}));
    layer->zero_grads();
    layer->backward(*tape, dy, nullptr, &dx, &d_initial);
    expect_close(dx, g0.dx, model + " dx (no d_final)", s);
    expect_close(*param(*layer, "w_recurrent").grad, g0.params.w_recurrent, model + " d w_recurrent (no d_final)", s);
}

class LstmLayerVsReference : public ::testing::TestWithParam<std::string> {};

TEST_P(LstmLayerVsReference, AwkwardShapes) {
    for (const Shape &s : kShapes) check_lstm(GetParam(), s);
}

TEST_P(LstmLayerVsReference, BadShapesAreErrors) {
    ModelConfig cfg = config(GetParam(), {3, 2, 5, 7});
    auto layer = nn::make_layer(cfg, 0);
    EXPECT_EQ(layer->kind(), GetParam());
    nn::State state = layer->initial_state(2);
    Tensor<float> y, x({3, 2, 4});
    EXPECT_THROW(layer->forward(x, state, y, nullptr), Error);  // n = 4, expected 5
    nn::State wrong = layer->initial_state(3);
    EXPECT_THROW(layer->forward(Tensor<float>({3, 2, 5}), wrong, y, nullptr), Error);  // state of batch 3
    auto tape = layer->make_tape();
    EXPECT_THROW(layer->backward(*tape, Tensor<float>({3, 2, 7}), nullptr, nullptr, nullptr), Error);  // no forward
    layer->forward(Tensor<float>({3, 2, 5}), state, y, tape.get());
    EXPECT_THROW(layer->backward(*tape, Tensor<float>({3, 2, 6}), nullptr, nullptr, nullptr), Error);  // dy
    EXPECT_NO_THROW(layer->backward(*tape, Tensor<float>({3, 2, 7}), nullptr, nullptr, nullptr));
}

TEST_P(LstmLayerVsReference, Flops) {
    ModelConfig cfg = config(GetParam(), {16, 8, 32, 24});
    auto layer = nn::make_layer(cfg, 0);
    EXPECT_DOUBLE_EQ(layer->forward_flops(16, 8), lstm_flops(cfg));
    EXPECT_DOUBLE_EQ(layer->backward_flops(16, 8), 16.0 * 8 * (4.0 * 4 * 24 * (32 + 24) + 16.0 * 24));
}

INSTANTIATE_TEST_SUITE_P(Baselines, LstmLayerVsReference, ::testing::Values("lstm-onednn", "lstm-halide"),
                         test::param_name);

// ---- CNN -----------------------------------------------------------------------------------------------
// One forward with its tape and two backward passes of `layer` at s.T x s.B, against the reference.
void check_cnn(nn::Layer *layer, const Shape &s) {
    const int64_t n = layer->input_size(), m = layer->output_size();
    Tensor<float> x = seeded_float({s.T, s.B, n}, 0x40010);
    nn::State state = layer->initial_state(s.B);
    auto tape = layer->make_tape();
    Tensor<float> y;
    layer->forward(x, state, y, tape.get());
    LayerParams<double> p{convert<double>(*param(*layer, "weights").value), convert<double>(*param(*layer, "bias").value)};
    Tensor<double> xd = convert<double>(x);
    expect_close(y, ref::cnn_forward(xd, {p}), "cnn y", s);

    Tensor<float> dy = seeded_float({s.T, s.B, m}, 0x40011), dx;
    ref::CnnGrads g = ref::cnn_backward(xd, {p}, convert<double>(dy));
    layer->zero_grads();
    for (int pass = 1; pass <= 2; pass++) {
        layer->backward(*tape, dy, nullptr, &dx, nullptr);
        expect_close(*param(*layer, "weights").grad, g.layers[0].weights, "cnn d weights", s, pass);
        expect_close(*param(*layer, "bias").grad, g.layers[0].bias, "cnn d bias", s, pass);
        expect_close(dx, g.dx, "cnn dx", s);
    }
}

TEST(CnnLayerVsReference, AwkwardShapes) {
    for (const Shape &s : kShapes) check_cnn(nn::make_layer(config("cnn", s), s.layers - 1).get(), s);
}

// The layer keeps its backward's work tensors between calls: a change of T or B between calls (k > T in the
// second) must resize them, and going back must give the first results again.
TEST(CnnLayerVsReference, ShapeChangesBetweenCalls) {
    const Shape first{5, 3, 7, 19, 3}, second{2, 4, 7, 19, 3};
    auto layer = nn::make_layer(config("cnn", first), 0);
    for (const Shape &s : {first, second, first}) check_cnn(layer.get(), s);
}

TEST(CnnLayerVsReference, BadShapesAreErrors) {
    auto layer = nn::make_layer(config("cnn", {3, 2, 5, 7, 2}), 0);
    nn::State state = layer->initial_state(2);
    Tensor<float> y;
    EXPECT_THROW(layer->forward(Tensor<float>({3, 2, 4}), state, y, nullptr), Error);
    auto tape = layer->make_tape();
    EXPECT_THROW(layer->backward(*tape, Tensor<float>({3, 2, 7}), nullptr, nullptr, nullptr), Error);
    layer->forward(Tensor<float>({3, 2, 5}), state, y, tape.get());
    EXPECT_THROW(layer->backward(*tape, Tensor<float>({3, 1, 7}), nullptr, nullptr, nullptr), Error);
    EXPECT_DOUBLE_EQ(layer->forward_flops(3, 2), 3.0 * 2 * 7 * (2.0 * 5 * 2 + 1));
    EXPECT_DOUBLE_EQ(layer->backward_flops(3, 2), 3.0 * 2 * 7 * (4.0 * 5 * 2 + 3));
}

TEST(BaselineLayers, Registered) {
    for (const char *model : {"lstm-onednn", "lstm-halide", "cnn", "lstm-cudnn"})
        EXPECT_TRUE(nn::has_layer_factory(model)) << model;
}

// The Halide and oneDNN baselines run on the JIT environment's target: another target is an error naming the model
// and HL_JIT_TARGET (it once timed AVX-512 code as the AVX2 path in `qrnn train-speed --target`); that target
// itself, spelled out with or without the jit feature, or none is accepted.
TEST(BaselineLayers, TargetOtherThanTheEnvironmentsIsAnError) {
    const Halide::Target jit = Halide::get_jit_target_from_environment();
    const std::string runs = jit.without_feature(Halide::Target::JIT).to_string();
    const std::string other = runs.find("avx") != std::string::npos ? "x86-64-linux-sse41" : "x86-64-linux-avx-avx2-fma-f16c";
    for (const char *model : {"lstm-onednn", "lstm-halide", "cnn"}) {
        ModelConfig cfg = config(model, {3, 2, 5, 7, 2});
        for (const std::string &fine : {std::string(), runs, jit.with_feature(Halide::Target::JIT).to_string()}) {
            cfg.target = fine;
            EXPECT_NO_THROW(nn::make_layer(cfg, 0)) << model << " target '" << fine << "'";
        }
        cfg.target = other;
        try {
            nn::make_layer(cfg, 0);
            ADD_FAILURE() << model << " accepted target " << other << " while running on " << runs;
        } catch (const Error &e) {
            const std::string message = e.what();
            EXPECT_NE(message.find(std::string("model '") + model + "' runs on the JIT target " + runs), std::string::npos) << message;
            EXPECT_NE(message.find("set HL_JIT_TARGET=" + other), std::string::npos) << message;
        }
    }
}

// lstm-cudnn: against the reference where it can run; elsewhere make_layer throws qrnn::Unavailable with
// the model plugin's reason ("no CUDA device", "built without CUDA/cuDNN").
TEST(BaselineLayers, CudnnAgainstReferenceOrUnavailable) {
    const std::string why = model_unavailable(find_model("lstm-cudnn"));
    if (why.empty()) {
        for (const Shape &s : kShapes) check_lstm("lstm-cudnn", s);
        return;
    }
    try {
        nn::make_layer(config("lstm-cudnn", kShapes[1]), 0);
        FAIL() << "lstm-cudnn unavailable (" << why << ") but make_layer succeeded";
    } catch (const Unavailable &e) {
        EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace qrnn
