// Every built-in model plugin against its double-precision reference on awkward shapes (T=1, B=1, widths
// that are not multiples of the vector size, k > T), through run_experiment as `qrnn run --verify` does.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "nn/layer.h"
#include "plugins/model.h"
#include "plugins/registry.h"
#include "reference/baselines.h"
#include "harness/experiment.h"
#include "plugins/training_model.h"
#include "tests/support/param_name.h"
#include "tests/support/error_text.h"

namespace qrnn {
namespace {

struct Shape {
    int64_t T, B, n, m, k, L = 1;
};
// m = 64: every CPU target's conv tile divides it (the QRNN and the CNN read their weights in place).
const Shape kAwkward[] = {{1, 1, 1, 1, 1},    {1, 3, 5, 17, 3},     {7, 1, 33, 9, 2},    {5, 3, 7, 19, 9},
                          {13, 2, 16, 33, 4}, {3, 9, 4, 40, 2},     {6, 2, 5, 17, 2, 2}, {4, 3, 19, 7, 3, 3},
                          {1, 1, 3, 2, 1, 2}, {5, 2, 9, 64, 2}};

void expect_verified(const std::string &model, const Shape &s) {
    ModelConfig cfg;
    cfg.model = model;
    cfg.seq = s.T, cfg.batch = s.B, cfg.input = s.n, cfg.hidden = s.m, cfg.window = s.k, cfg.layers = s.L;
    RunOptions opts;
    opts.warmup = 0, opts.repeats = 1, opts.verify = true;
    RunReport r = run_experiment(cfg, opts);
    ASSERT_TRUE(r.error.has_value());
    EXPECT_TRUE(r.error->finite) << model << " " << cfg.describe();
    EXPECT_LT(r.error->rel(), 1e-4) << model << " " << cfg.describe();
    EXPECT_GT(r.error->max_ref, 0.0) << model << ": reference output is all zeros, the check would be vacuous";
    EXPECT_GT(r.gflops, 0.0);
}

class ModelVsReference : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelVsReference, AwkwardShapes) {
    for (const Shape &s : kAwkward) expect_verified(GetParam(), s);
}

INSTANTIATE_TEST_SUITE_P(Builtin, ModelVsReference,
                         ::testing::Values("qrnn", "lstm-halide", "lstm-onednn", "cnn", "cnn-maxpool"),
                         test::param_name);

// The LSTM reference in closed form: zero weights and bias give i = f = o = 1/2, g = 0, so each step
// halves c and h_t = tanh(c_t) / 2.
TEST(LstmReference, ZeroWeightsClosedForm) {
    const int64_t T = 3, B = 2, n = 3, m = 2;
    LstmParams<double> p{Tensor<double>({n, 4, m}), Tensor<double>({m, 4, m}), Tensor<double>({4, m})};
    Tensor<double> x({T, B, n}, 0.7), h0({B, m}, 0.3), c0({B, m});
    c0.data = {0.8, -0.4, 1.6, 0.2};
    ref::LstmOutput out = ref::lstm_forward(x, p, h0, c0);
    for (int64_t b = 0; b < B; b++)
        for (int64_t u = 0; u < m; u++) {
            double c = c0(b, u);
            for (int64_t t = 0; t < T; t++) {
                c /= 2;
                EXPECT_NEAR(out.h(t, b, u), std::tanh(c) / 2, 1e-15);
            }
            EXPECT_NEAR(out.c_T(b, u), c, 1e-15);
        }
}

// One gate open: bias drives i and o to ~1, f to ~0, g = tanh(x*w): h = tanh(tanh(w*x)).
TEST(LstmReference, InputOnlyPath) {
    LstmParams<double> p{Tensor<double>({1, 4, 1}), Tensor<double>({1, 4, 1}), Tensor<double>({4, 1})};
    p.bias.data = {50, -50, 0, 50};  // i, f, g, o
    p.w_input(0, kGateG, 0) = 0.5;
    Tensor<double> x({1, 1, 1}, 0.8), h0({1, 1}), c0({1, 1}, 3.0);
    ref::LstmOutput out = ref::lstm_forward(x, p, h0, c0);
    EXPECT_NEAR(out.h(0, 0, 0), std::tanh(std::tanh(0.4)), 1e-12);
}

TEST(CnnReference, MaxOverTime) {
    Tensor<double> y({3, 1, 2});
    y.data = {1, -5, 4, -2, 2, -3};
    Tensor<double> pooled = ref::max_over_time(y);
    EXPECT_EQ(pooled.data, (std::vector<double>{4, -2}));
}

TEST(ModelRegistry, ListsEveryKind) {
    std::set<std::string> seen;
    for (auto &p : list_plugins()) seen.insert(p.kind + ":" + p.name);
    for (const char *want : {"pooling:f", "pooling:fo", "pooling:ifo", "model:qrnn", "model:lstm-halide",
                             "model:lstm-onednn", "model:lstm-cudnn", "model:cnn", "model:cnn-maxpool", "model:encdec", "model:encdec-noattn",
                             "schedule:tuned"})
        EXPECT_TRUE(seen.count(want)) << want;
    EXPECT_THROW(list_plugins("nonsense"), Error);
}

TEST(ModelRegistry, ValidateNamesKnownModels) {
    ModelConfig cfg;
    cfg.model = "gru";
    try {
        validate_model_config(cfg);
        FAIL() << "unknown model accepted";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("unknown model 'gru' (known: cnn, cnn-maxpool"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("lstm-onednn"), std::string::npos) << e.what();
    }
    cfg.model = "lstm-onednn";
    cfg.pooling = "no-such-pooling";  // not used by the LSTM: no error
    EXPECT_NO_THROW(validate_model_config(cfg));
    cfg.layers = 2;
    EXPECT_NO_THROW(validate_model_config(cfg));
    cfg.stochastic = true;  // the baselines have no zoneout/dropout
    EXPECT_THROW(validate_model_config(cfg), Error);
}

using qrnn::test::error_of;

// The listing's "passes" is the predicate --pass training dispatches on; make_layer says why it cannot build a
// layer of a model that trains only as a whole stack, or not layer by layer at all.
TEST(ModelRegistry, TrainingSupportAndMakeLayerErrors) {
    for (const char *name : {"qrnn", "qrnn-dense", "qrnn-bidir", "qrnn-varlen", "encdec", "encdec-noattn", "cnn"})
        EXPECT_TRUE(model_trains(find_model(name))) << name;
    EXPECT_FALSE(model_trains(find_model("cnn-maxpool")));
    for (auto &p : list_plugins("model")) {
        const bool listed = p.supports.find("passes=inference+training") != std::string::npos;
        EXPECT_EQ(listed, model_trains(find_model(p.name))) << p.name << ": " << p.supports;
    }
    ModelConfig cfg;
    cfg.model = "qrnn-dense";
    const std::string dense = error_of([&] { nn::make_layer(cfg, 0); });
    EXPECT_NE(dense.find("model 'qrnn-dense' trains only as a whole stack (nn::LayerStack(cfg) or nn::make_layers(cfg)), not "
                         "layer by layer"), std::string::npos) << dense;
    EXPECT_EQ(dense.find('\n'), std::string::npos) << dense;
    EXPECT_EQ(dense.find("no backward pass"), std::string::npos) << dense;
    cfg.model = "encdec";
    const std::string encdec = error_of([&] { nn::make_layer(cfg, 0); });
    EXPECT_NE(encdec.find("model 'encdec' is not a stack of trainable layers (those are: cnn, "), std::string::npos) << encdec;
    EXPECT_NE(encdec.find("qrnn-dense"), std::string::npos) << encdec;
    cfg.model = "cnn-maxpool", cfg.pass = "training";
    const std::string maxpool = error_of([&] { build_training_model(cfg, RunOptions{}); });
    EXPECT_NE(maxpool.find("model 'cnn-maxpool' has no backward pass (--pass training runs: cnn, encdec, encdec-noattn, "),
              std::string::npos) << maxpool;
}

TEST(ModelRegistry, DuplicateModelRejected) {
    ModelPlugin p{"qrnn", "again", {}, {"cpu"}, nullptr, nullptr,
                  [](const ModelConfig &, const RunOptions &) -> std::unique_ptr<Model> { return nullptr; }};
    EXPECT_THROW(register_model(p), Error);
}

// Without a CUDA device the cuDNN baseline is listed, reports exactly this reason and is skipped.
TEST(LstmCudnn, UnavailableWithoutDevice) {
    const ModelPlugin &p = find_model("lstm-cudnn");
    std::string why = model_unavailable(p);
    ModelConfig cfg;
    cfg.model = "lstm-cudnn";
    cfg.seq = 5, cfg.batch = 3, cfg.input = 7, cfg.hidden = 19;
    if (why.empty()) {  // a GPU machine: verify it like the others
        expect_verified("lstm-cudnn", {5, 3, 7, 19, 1});
        expect_verified("lstm-cudnn", {4, 3, 19, 7, 1, 3});
        return;
    }
#ifdef QRNN_HAVE_CUDNN
    const std::string expected = "no CUDA device";
#else
    const std::string expected = "built without CUDA/cuDNN";
#endif
    EXPECT_EQ(why, expected);
    try {
        run_experiment(cfg, RunOptions{});
        FAIL() << "lstm-cudnn ran without a device";
    } catch (const Unavailable &e) {  // sweeps record it as "unavailable", not as a failure
        EXPECT_EQ(std::string(e.what()), "model 'lstm-cudnn' unavailable: " + expected);
    }
}

}  // namespace
}  // namespace qrnn
