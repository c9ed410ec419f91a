// Precision int8 (runtime/int8_params.h, docs/int8.md): the quantizer against its definition; the QRNN layer (every
// pooling, awkward shapes: T = 1, B = 1, odd widths, k > T) against the double reference that quantizes as the kernel
// does, stacks, and against the plain f32 reference within the bound quantization gives (and farther from it than f32
// is); the VNNI kernel (vpdpbusd) a target with the dot product gets; the errors for what has no int8 path.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "harness/experiment.h"
#include "nn/qrnn_layer.h"
#include "nn/seq_layer.h"
#include "nn/stack.h"
#include "plugins/model.h"
#include "reference/qrnn_seq.h"
#include "reference/reference.h"
#include "runtime/compare.h"
#include "runtime/int8_params.h"
#include "schedules/schedule.h"
#include "tests/support/cli.h"
#include "tests/support/error_text.h"
#include "tests/support/precision_case.h"
#include "tests/support/verified_run.h"

using namespace qrnn;
using qrnn::test::max_abs;
using qrnn::test::verified_error;

namespace {
using qrnn::test::kF32Tolerance;
using Shape = qrnn::test::LayerCase;

ModelConfig config(const std::string &pooling, int64_t k, const Shape &s, const std::string &schedule = "tuned") {
    return qrnn::test::precision_config("int8", pooling, k, s, schedule);
}
}  // namespace

TEST(Int8Quantize, RowsAreSymmetricWithinHalfAStep) {
    Tensor<float> w({3, 2, 5, 4});
    for (size_t i = 0; i < w.size(); i++) w.data[i] = 0.7f * std::sin(1.3f * static_cast<float>(i) + 0.2f);
    for (int64_t j = 0; j < 2; j++)
        for (int64_t c = 0; c < 5; c++) w(1, j, c, 2) = 0.0f;  // an all-zero row
    const Int8LayerParams q = quantize_layer(w, 2.54f);
    EXPECT_FLOAT_EQ(q.input_scale, 0.02f);
    for (int64_t g = 0; g < 3; g++)
        for (int64_t h = 0; h < 4; h++) {
            int largest = 0, sum = 0;
            for (int64_t j = 0; j < 2; j++)
                for (int64_t c = 0; c < 5; c++) {
                    const int v = q.weights(g, j, c, h);
                    largest = std::max(largest, std::abs(v)), sum += v;
                    EXPECT_LE(std::fabs(v * q.weight_scales(g, h) - w(g, j, c, h)), 0.5001 * q.weight_scales(g, h));
                }
            const bool zero = g == 1 && h == 2;
            EXPECT_EQ(largest, zero ? 0 : 127) << g << " " << h;
            if (zero) EXPECT_EQ(q.weight_scales(g, h), 1.0f);
            EXPECT_EQ(q.weight_sums(g, h), sum);
            EXPECT_FLOAT_EQ(q.dequantize(g, h), q.weight_scales(g, h) * q.input_scale);
        }
    EXPECT_EQ(quantize_int8(0.5f, 1.0f), 0);  // ties to even
    EXPECT_EQ(quantize_int8(1.5f, 1.0f), 2);
    EXPECT_EQ(quantize_int8(-300.0f, 1.0f), -127);  // clamped, symmetric
    EXPECT_EQ(quantize_int8(300.0f, 1.0f), 127);
}

// One layer reads exactly the input the reference quantizes: only f32 arithmetic (the dequantization, activations and
// scan) differs.
TEST(Int8Layer, MatchesTheQuantizedReferenceOnAwkwardShapes) {
    for (const char *pooling : {"f", "fo", "ifo"})
        for (int64_t k : {1, 2, 3})
            for (const Shape &s : {Shape{1, 1, 1, 1}, Shape{9, 4, 21, 40}, Shape{2, 3, 33, 17}, Shape{5, 2, 4, 70}}) {
                ModelConfig cfg = config(pooling, k, s);
                EXPECT_LE(verified_error(cfg), kF32Tolerance) << cfg.describe();
            }
    EXPECT_LE(verified_error(config("fo", 5, {3, 2, 7, 9})), kF32Tolerance) << "k > T";
    EXPECT_LE(verified_error(config("fo", 2, {32, 4, 320, 320})), kF32Tolerance) << "the paper's width";
}

// Above layer 0 an input is the layer below's output, f32 here and double in the reference: one within that
// difference of a quantization boundary rounds a whole step apart (kInt8Tolerance, runtime/compare.h).
TEST(Int8Layer, StackOfThreeWithMasksMatchesTheQuantizedReference) {
    ModelConfig cfg = config("ifo", 2, {11, 3, 9, 21});
    cfg.layers = 3, cfg.stochastic = true, cfg.zoneout = 0.3, cfg.dropout = 0.2, cfg.seed = 7;
    EXPECT_LE(verified_error(cfg), kInt8Tolerance) << cfg.describe();
}

namespace {
// One int8 layer's output and the plain f32 reference's, with the bound quantization gives (docs/int8.md).
struct AgainstF32 {
    double error = 0, bound = 0, scale = 0;
};

AgainstF32 against_f32(const ModelConfig &cfg) {
    nn::LayerStack stack(cfg);
    stack.calibrate_int8({calibration_input(cfg)});
    std::vector<nn::State> states = stack.initial_state(cfg.batch);
    const Tensor<float> x = init_input(cfg);
    const Tensor<float> h = stack.forward(x, states, nullptr);
    auto p = stack.layer(0).params();
    std::vector<LayerParams<double>> params{{convert<double>(*p[0].value), convert<double>(*p[1].value)}};
    StackState<double> s;
    s.layers = {convert<double>(nn::layer_state(stack.initial_state(cfg.batch)[0]))};
    ModelConfig plain = cfg;
    plain.precision = "f32";
    const Tensor<double> ref = ref::stack_forward(plain, params, convert<double>(x), s).h;
    // A product's error: |w^ x^ - w x| <= |w^| dx + |x| s_w / 2 (dx: the largest |x - x^|, clipping included); a
    // pre-activation's at most E = n k max of that; then the scan as docs/precision.md's bf16 bound.
    const Int8LayerParams &q = dynamic_cast<nn::QrnnLayer &>(stack.layer(0)).int8_params();
    double dx = 0, x_max = 0, w_max = 0, s_max = 0;
    for (float v : x.data) {
        const double xq = quantize_int8(v, 1.0f / q.input_scale) * static_cast<double>(q.input_scale);
        dx = std::max(dx, std::fabs(v - xq)), x_max = std::max(x_max, std::fabs(static_cast<double>(v)));
    }
    for (size_t i = 0; i < q.weight_scales.size(); i++) s_max = std::max(s_max, static_cast<double>(q.weight_scales.data[i]));
    w_max = 127 * s_max;
    const double E = static_cast<double>(cfg.input * cfg.window) * (w_max * dx + x_max * s_max / 2);
    const double T = static_cast<double>(cfg.seq);
    AgainstF32 out;
    for (size_t i = 0; i < h.size(); i++) out.error = std::max(out.error, std::fabs(h.data[i] - ref.data[i]));
    out.bound = E * (1.25 * T + T * T / 8 + 0.25);
    out.scale = max_abs(ref);
    return out;
}
}  // namespace

TEST(Int8Layer, ErrorAgainstF32IsQuantizationWithinItsBound) {
    for (const char *pooling : {"f", "fo", "ifo"})
        for (const Shape &s : {Shape{9, 4, 21, 40}, Shape{32, 4, 320, 320}}) {
            ModelConfig cfg = config(pooling, 2, s);
            const AgainstF32 r = against_f32(cfg);
            EXPECT_LE(r.error, r.bound) << cfg.describe();
            EXPECT_GT(r.error, 1e-3 * r.scale) << cfg.describe() << ": int8 ran as f32";
        }
}

// The variable-length / bidirectional layer (pQRNN's encoder): the reverse direction's taps and each sequence's
// padding quantized as the reference does; farther from the f32 reference than f32 gets (int8 really ran).
TEST(Int8SeqLayer, MatchesTheQuantizedReferenceAndDiffersFromF32) {
    for (const char *model : {"qrnn-bidir-varlen"})  // one model and width: one pipeline per precision (compiles dominate)
        for (const Shape &s : {Shape{1, 1, 3, 17}, Shape{2, 4, 5, 17}, Shape{9, 3, 33, 17}}) {
            ModelConfig cfg = config("ifo", 3, s);
            cfg.model = model, cfg.layers = 2;
            nn::LayerStack stack(cfg);
            nn::set_stack_lengths(stack, nn::seq_lengths(cfg));
            stack.calibrate_int8({calibration_input(cfg)});
            std::vector<nn::State> states = stack.initial_state(cfg.batch);
            const Tensor<float> x = init_input(cfg);
            const Tensor<float> y = stack.forward(x, states, nullptr);
            std::vector<LayerParams<double>> params;
            std::vector<LayerState<double>> zero_states;
            std::vector<const Int8LayerParams *> int8;
            for (size_t l = 0; l < stack.size(); l++) {
                auto &layer = dynamic_cast<nn::SeqQrnnLayer &>(stack.layer(l));
                params.push_back(convert<double>(layer.layer_params()));
                zero_states.push_back(convert<double>(nn::layer_state(stack.initial_state(cfg.batch)[l])));
                int8.push_back(&layer.int8_params());
            }
            const SeqOptions options = nn::seq_model_options(model);
            const std::vector<int32_t> lengths = nn::seq_lengths(cfg);
            const Tensor<double> q = ref::seq_stack_forward(cfg, options, params, convert<double>(x), lengths, zero_states, 0, int8);
            const Tensor<double> f = ref::seq_stack_forward(cfg, options, params, convert<double>(x), lengths, zero_states, 0);
            EXPECT_LE(compare(y, q).rel(), kInt8Tolerance) << model << " " << cfg.describe();
            EXPECT_GT(compare(y, f).rel(), 1e-3) << model << " " << cfg.describe() << ": int8 ran as f32";
        }
}

namespace {
using qrnn::test::kAvx2Target;
using qrnn::test::kDotTarget;
std::string forward_assembly(const std::string &target_name) { return qrnn::test::layer_assembly(Precision::int8, target_name); }
}  // namespace

// The conv's register tiles are vpdpbusd (4 products of u8 input and s8 weights an int32 lane) where the target has
// the dot product; on AVX2 the same algorithm runs on a fallback.
TEST(Int8Kernel, DotProductTargetEmitsVpdpbusd) {
    EXPECT_GE(qrnn::test::count_of(forward_assembly(kDotTarget), "vpdpbusd"), 16u);  // a register tile's worth per quad of channels
    EXPECT_EQ(qrnn::test::count_of(forward_assembly(kAvx2Target), "vpdpbusd"), 0u);
}

TEST(Int8Kernel, VnniHostGetsTheDotProductTarget) {
    const Halide::Target avx2(kAvx2Target);
    EXPECT_EQ(int8_kernel_target(avx2), avx2) << "a target without AVX-512 keeps its ISA";
    const Halide::Target host = Halide::get_host_target();
    if (!host.has_feature(Halide::Target::AVX512_Cannonlake) || !__builtin_cpu_supports("avx512vnni"))
        GTEST_SKIP() << "this CPU has no avx512_vnni";
    EXPECT_TRUE(has_int8_dot_product(int8_kernel_target(host)));
}

TEST(Int8Errors, WhatHasNoInt8PathSaysSo) {
    using qrnn::test::error_of;
    ModelConfig cfg = config("fo", 2, {4, 2, 8, 8});
    cfg.pass = "training";
    EXPECT_EQ(error_of([&] { validate_model_config(cfg); }), "--precision int8 is for inference (got --pass training)");
    cfg.pass = "inference", cfg.model = "lstm-halide";
    EXPECT_EQ(error_of([&] { validate_model_config(cfg); }), "model 'lstm-halide' has no int8 path (got --precision int8; docs/int8.md)");
    cfg.model = "qrnn", cfg.precision = "fp8";
    EXPECT_EQ(error_of([&] { validate_model_config(cfg); }), "--precision must be f32, bf16 or int8 (got 'fp8')");
    EXPECT_THROW(check_precision(Precision::int8, Halide::Target("host-cuda")), Error);
    EXPECT_EQ(error_of([] { compiled_layer(find_pooling("fo"), "fused", {}, {}, Halide::get_jit_target_from_environment(), Precision::int8); }),
              "schedule 'fused' has no int8 conv (precision int8 runs with schedule 'tuned')");
    ModelConfig plain = config("fo", 2, {4, 2, 8, 8});
    nn::LayerStack stack(plain);
    std::vector<nn::State> states = stack.initial_state(2);
    EXPECT_EQ(error_of([&] { stack.forward(init_input(plain), states, nullptr); }),
              "QRNN layer 0: int8 forward before calibration (nn::LayerStack::calibrate_int8)");
}

TEST(Int8Cli, RunVerifiesAStack) {
    qrnn::test::expect_cli("run --model qrnn --precision int8 --layers 2 --batch 3 --seq 7 --input 24 --hidden 40 --verify",
                           0, "verify: all within max relative error 1.00e-04 (int8: 2.00e-03)");
}

namespace {
// The first `lines` lines of data/corpus-source/<split>.tsv in dir.
void corpus_slice(const std::string &dir, const std::string &split, int lines) {
    std::ifstream in(std::string(QRNN_SOURCE_DIR) + "/data/corpus-source/" + split + ".tsv");
    std::ofstream out(dir + "/" + split + ".tsv");
    std::string line;
    for (int i = 0; i < lines && std::getline(in, line); i++) out << line << "\n";
}
}  // namespace

// qrnn eval of a pQRNN checkpoint: f32 gives the accuracy training printed for the same file; int8 runs beside it,
// calibrated on valid, and its line names the drop and the predictions int8 changed; --save-int8 stores the int8
// parameters in the checkpoint, which the next eval uses.
TEST(Int8Cli, EvalOfAPqrnnCheckpointComparesF32AndInt8) {
    const std::string dir = qrnn::test::scratch_path("corpus");
    std::filesystem::create_directories(dir);
    corpus_slice(dir, "train", 300), corpus_slice(dir, "valid", 100), corpus_slice(dir, "test", 120);
    const std::string checkpoint = dir + "/pqrnn.h5";
    const qrnn::test::CliResult train = qrnn::test::run_cli(
        "train --task classify-text --data " + dir + " --model qrnn-bidir --front projection --projection_features 64 "
        "--emb 16 --hidden 8 --epochs 2 --checkpoint " + checkpoint);
    ASSERT_EQ(train.exit_code, 0) << train.output;
    const size_t at = train.output.find(" test ");
    ASSERT_NE(at, std::string::npos) << train.output;
    const std::string test_accuracy = train.output.substr(at + 6, 6);
    const std::string eval_args = "eval " + checkpoint + " --data " + dir + "/test.tsv --precision int8";
    const qrnn::test::CliResult eval = qrnn::test::run_cli(eval_args + " --save-int8");
    ASSERT_EQ(eval.exit_code, 0) << eval.output;
    EXPECT_NE(eval.output.find("accuracy " + test_accuracy + " f32, "), std::string::npos) << train.output << eval.output;
    for (const std::string &want : std::vector<std::string>{" int8 (drop ", " predictions changed; int8 calibrated on ",
                                                            "valid.tsv, 100 examples); 120 examples",
                                                            "int8 parameters saved in " + checkpoint + " (/int8)"})
        EXPECT_NE(eval.output.find(want), std::string::npos) << eval.output;
    // Again: the checkpoint's int8 parameters, the same int8 predictions.
    const qrnn::test::CliResult again = qrnn::test::run_cli(eval_args);
    ASSERT_EQ(again.exit_code, 0) << again.output;
    const std::string int8_part = eval.output.substr(eval.output.find(" f32, "), eval.output.find("; int8 ") - eval.output.find(" f32, "));
    EXPECT_NE(again.output.find(int8_part + "; int8 parameters from the checkpoint, calibrated on "), std::string::npos)
        << eval.output << again.output;
    qrnn::test::expect_cli("eval " + checkpoint + " --data " + dir + "/test.tsv --precision bf16", 2,
                           "--precision: 'bf16' is not f32 or int8");
}
