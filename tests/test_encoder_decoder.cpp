// The float encoder-decoder (nn/encoder_decoder.h: QRNN layers with the conditioning input, the attention
// pipelines) against the double reference (reference/encoder_decoder.h): output and every gradient, on
// awkward shapes, every pooling, with and without attention, masks off and on, on the host target and on
// every narrower CPU target this machine runs. Step-by-step decoding equals the whole-sequence forward.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "core/error.h"
#include "nn/encoder_decoder.h"
#include "schedules/cpu_target.h"
#include "tests/support/encdec_problem.h"

namespace qrnn::test {
namespace {
constexpr double kTolerance = 2e-4;
}  // namespace

class EncoderDecoderFloat : public ::testing::TestWithParam<std::tuple<std::string, bool, bool>> {};

TEST_P(EncoderDecoderFloat, MatchesReferenceOnHost) {
    auto [pooling, attention, stochastic] = GetParam();
    double worst = 0;
    for (const EncDecShape &s : encdec_shapes()) {
        EncDecProblem p = make_encdec_problem(s, pooling, attention, stochastic);
        Worst w = float_vs_reference(p, "");
        EXPECT_LE(w.rel, kTolerance) << p.cfg.describe() << ": worst " << w.name;
        worst = std::max(worst, w.rel);
    }
    std::cout << pooling << (attention ? " attention" : " no attention") << (stochastic ? " masks" : "")
              << ": worst rel err float vs double " << worst << "\n";
}

INSTANTIATE_TEST_SUITE_P(EveryPooling, EncoderDecoderFloat,
                         ::testing::Combine(::testing::Values("f", "fo", "ifo"), ::testing::Bool(), ::testing::Bool()));

// Decoding a step at a time (greedy inference's path) gives the whole-sequence forward's output and attention.
TEST(EncoderDecoderFloat, StepwiseDecodingMatchesForward) {
    EncDecProblem p = make_encdec_problem(encdec_shapes()[2], "fo", true, false);
    nn::EncoderDecoder model(p.cfg);
    model.set_parameters(convert<float>(p.params));
    const Tensor<float> source = convert<float>(p.source), target = convert<float>(p.target);
    nn::EncDecTape tape;
    Tensor<float> whole = model.forward(source, p.lengths, target, &tape);
    nn::Encoded enc = model.encode(source, p.lengths);
    std::vector<nn::State> states = model.decoder_state(target.dim(1));
    const int64_t T = target.dim(0), B = target.dim(1), m = whole.dim(2), S = source.dim(0);
    for (int64_t t = 0; t < T; t++) {
        Tensor<float> out, alpha;
        model.decode(enc, leading_rows(target, t, 1), states, out, &alpha);
        for (int64_t b = 0; b < B; b++) {
            for (int64_t h = 0; h < m; h++) EXPECT_NEAR(out(0, b, h), whole(t, b, h), 1e-5) << t << " " << b << " " << h;
            for (int64_t s = 0; s < S; s++) EXPECT_NEAR(alpha(b, 0, s), tape.attention.alpha(b, t, s), 1e-6);
        }
    }
}

TEST(EncoderDecoderFloat, BadInputIsAClearError) {
    EncDecProblem p = make_encdec_problem(encdec_shapes()[1], "fo", true, false);
    auto message = [](const std::function<void()> &f) {
        try {
            f();
        } catch (const Error &e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EncDecConfig c = p.cfg;
    c.decoder.layers = 3;
    EXPECT_NE(message([&] { nn::EncoderDecoder m(c); }).find("decoder has 3 layers but the encoder 2"), std::string::npos);
    c = p.cfg, c.decoder.hidden += 1;
    EXPECT_NE(message([&] { nn::EncoderDecoder m(c); }).find("decoder width " + std::to_string(c.decoder.hidden) +
                                                              " differs from the encoder width"), std::string::npos);
    c = p.cfg, c.encoder.layers = 0;
    EXPECT_NE(message([&] { nn::EncoderDecoder m(c); }).find("attention needs an encoder"), std::string::npos);
    nn::EncoderDecoder model(p.cfg);
    const Tensor<float> source = convert<float>(p.source), target = convert<float>(p.target);
    EXPECT_NE(message([&] { model.forward(source, {0, 1}, target, nullptr); }).find("source length 0 of sequence 0"),
              std::string::npos);
    EXPECT_NE(message([&] { model.forward(source, {4, 1}, target, nullptr); }).find("outside [1, 3]"), std::string::npos);
    EncDecParams<float> one_layer = model.parameters();
    one_layer.encoder.pop_back();
    EXPECT_NE(message([&] { model.set_parameters(one_layer); }).find("encoder-decoder parameters: 1/2/2"), std::string::npos);
    nn::EncDecTape empty;
    EXPECT_NE(message([&] { model.backward(empty, Tensor<float>({2, 2, 5}), nullptr, nullptr); }).find("no tape"),
              std::string::npos);
}

}  // namespace qrnn::test
