// The language model in double (reference/language_model.h): its analytic gradient against central finite
// differences in double through embedding, stack (QRNN with zoneout and dropout, or LSTM), io dropout, decoder
// and loss, at 1e-6 relative; a gradient 0.1% off fails that bound. And the float model (lm::LanguageModel:
// Halide/oneDNN layers and decoder) against this reference on the same batch, masks and carried state.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "lm/language_model.h"
#include "nn/dropout.h"
#include "reference/language_model.h"
#include "tests/support/finite_differences.h"
#include "tests/support/lm_problem.h"

using namespace qrnn;
using qrnn::test::small_batch;
using qrnn::test::small_lm;
using qrnn::test::small_run;

namespace {

// The multiplier nn::apply_dropout applies to a [T][B][C] tensor for `stream` at `time`.
Tensor<double> dropout_mask(int64_t T, int64_t B, int64_t C, double p, uint32_t seed, uint32_t stream, int64_t time) {
    Tensor<float> ones({T, B, C}, 1.0f);
    nn::apply_dropout(ones, p, seed, stream, time);
    return convert<double>(ones);
}

Tensor<double> stacked(const std::vector<nn::State> &states, const std::string &name) {
    return convert<double>(nn::stacked_state(states, name));
}

// A float model after one batch (a non-zero carried state, masks on), the next batch, and the same in double.
struct Problem {
    lm::LmShape shape;
    std::unique_ptr<lm::LanguageModel> model;
    lm::Batch batch;
    std::vector<nn::State> carried;
    ref::LmBatch ref_batch;
    ref::LmParams ref_params;
};

Problem make_problem(const std::string &model, bool tied) {
    Problem pr;
    pr.shape = small_lm(model, tied);
    pr.model = std::make_unique<lm::LanguageModel>(pr.shape, small_run());
    pr.model->set_stochastic(true);
    pr.model->reset_state(2, 0);
    pr.model->step(small_batch(0), false);  // a non-zero carried state, masks at time 3
    pr.carried = pr.model->carried_state();
    pr.batch = small_batch(1);

    ref::LmBatch &rb = pr.ref_batch;
    const ModelConfig cfg(pr.shape.stack, small_run());
    const int64_t T = pr.batch.T, B = pr.batch.B, time = pr.carried.front().time;
    rb.cfg = cfg, rb.T = T, rb.B = B, rb.tokens = pr.batch.inputs, rb.targets = pr.batch.targets;
    rb.cfg.stochastic = true;  // the QRNN layers' own masks on, as in training
    rb.in_mask = dropout_mask(T, B, cfg.input, pr.shape.io_dropout, cfg.seed, 0, time);
    rb.out_mask = dropout_mask(T, B, cfg.hidden, pr.shape.io_dropout, cfg.seed, 1, time);
    ref::LmParams &p = pr.ref_params;
    std::map<std::string, Tensor<double>> by_name;
    for (auto &param : pr.model->params()) by_name[param.name] = convert<double>(*param.value);
    p.embedding = by_name.at("embedding");
    p.decoder_bias = by_name.at("decoder/bias");
    if (!tied) p.decoder_weights = by_name.at("decoder/weights");
    for (int64_t l = 0; l < cfg.layers; l++) {
        const std::string at = "layer_" + std::to_string(l) + "/";
        if (model == "qrnn") {
            p.qrnn.push_back({by_name.at(at + "weights"), by_name.at(at + "bias")});
            rb.qrnn_state.layers.push_back({convert<double>(pr.carried[l].at("history")), convert<double>(pr.carried[l].at("c"))});
        } else {
            p.lstm.push_back({by_name.at(at + "w_input"), by_name.at(at + "w_recurrent"), by_name.at(at + "bias")});
            if (l > 0) rb.between.push_back(dropout_mask(T, B, cfg.hidden, cfg.dropout, cfg.seed, 2 + static_cast<uint32_t>(l), time));
        }
    }
    rb.qrnn_state.time = time;
    if (model != "qrnn") rb.h0 = stacked(pr.carried, "h"), rb.c0 = stacked(pr.carried, "c");
    return pr;
}

// Every parameter tensor of p with its gradient in g, named as the float model's.
std::vector<std::pair<std::string, std::pair<Tensor<double> *, const Tensor<double> *>>> named(ref::LmParams &p, const ref::LmParams &g) {
    std::vector<std::pair<std::string, std::pair<Tensor<double> *, const Tensor<double> *>>> all{
        {"embedding", {&p.embedding, &g.embedding}}};
    for (size_t l = 0; l < p.qrnn.size(); l++) {
        all.push_back({"layer_" + std::to_string(l) + "/weights", {&p.qrnn[l].weights, &g.qrnn[l].weights}});
        all.push_back({"layer_" + std::to_string(l) + "/bias", {&p.qrnn[l].bias, &g.qrnn[l].bias}});
    }
    for (size_t l = 0; l < p.lstm.size(); l++) {
        all.push_back({"layer_" + std::to_string(l) + "/w_input", {&p.lstm[l].w_input, &g.lstm[l].w_input}});
        all.push_back({"layer_" + std::to_string(l) + "/w_recurrent", {&p.lstm[l].w_recurrent, &g.lstm[l].w_recurrent}});
        all.push_back({"layer_" + std::to_string(l) + "/bias", {&p.lstm[l].bias, &g.lstm[l].bias}});
    }
    if (p.decoder_weights.size()) all.push_back({"decoder/weights", {&p.decoder_weights, &g.decoder_weights}});
    all.push_back({"decoder/bias", {&p.decoder_bias, &g.decoder_bias}});
    return all;
}

// Central differences of the double loss against its analytic gradient; `corrupt` scales the analytic
// gradient of the decoder bias (a deliberately wrong gradient).
test::FdWorst double_gradient_error(Problem &pr, double corrupt = 1.0) {
    ref::LmParams g = ref::lm_gradients(pr.ref_batch, pr.ref_params);
    for (auto &x : g.decoder_bias.data) x *= corrupt;
    return test::finite_difference_check(named(pr.ref_params, g), [&] { return ref::lm_loss(pr.ref_batch, pr.ref_params); }, 1e-5);
}

const char *kCases[][2] = {{"qrnn", ""}, {"qrnn", "tied"}, {"lstm-onednn", ""}};

}  // namespace

TEST(LmReference, DoubleGradientMatchesFiniteDifferences) {
    for (auto [model, tied] : kCases) {
        Problem pr = make_problem(model, std::string(tied) == "tied");
        const test::FdWorst w = double_gradient_error(pr);
        std::cout << model << " " << tied << ": worst relative error of the double gradient " << w.rel << " (" << w.name << ")\n";
        EXPECT_LT(w.rel, 1e-6) << model << " " << tied << ": " << w.name;
    }
}

TEST(LmReference, AGradientOffByATenthOfAPercentFails) {
    Problem pr = make_problem("qrnn", false);
    const test::FdWorst w = double_gradient_error(pr, 1.001);
    EXPECT_GT(w.rel, 1e-4);
    EXPECT_EQ(w.name, "decoder/bias");
}

// The float model (its layers, decoder and masks) computes the reference's loss and gradients.
TEST(LmReference, FloatModelMatchesTheDoubleReference) {
    for (auto [model, tied] : kCases) {
        Problem pr = make_problem(model, std::string(tied) == "tied");
        pr.model->carried_state() = pr.carried;
        pr.model->zero_grads();
        const double loss = pr.model->step(pr.batch, true).loss, want = ref::lm_loss(pr.ref_batch, pr.ref_params);
        EXPECT_NEAR(loss, want, 1e-5 * std::abs(want)) << model << " " << tied;
        ref::LmParams g = ref::lm_gradients(pr.ref_batch, pr.ref_params);
        std::map<std::string, const Tensor<double> *> ref_grads;
        for (auto &[name, pair] : named(pr.ref_params, g)) ref_grads[name] = pair.second;
        const std::vector<nn::Param> params = pr.model->params();
        ASSERT_EQ(params.size(), ref_grads.size()) << model << " " << tied;
        for (auto &p : params) {
            const Tensor<double> &want_g = *ref_grads.at(p.name);
            double err = 0, scale = 1e-30;
            for (size_t i = 0; i < want_g.size(); i++) {
                err = std::max(err, std::abs(p.grad->data[i] - want_g.data[i]));
                scale = std::max(scale, std::abs(want_g.data[i]));
            }
            EXPECT_LT(err / scale, 1e-4) << model << " " << tied << ": " << p.name;
        }
    }
}
