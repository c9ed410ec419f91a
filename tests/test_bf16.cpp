// Precision bf16 (core/precision.h, docs/precision.md): the QRNN layer (every pooling, k, awkward shape: the matrix of
// tests/test_layer.cpp) against the double reference with the same operands rounded to bfloat16 (f32 tolerance: only
// the accumulation differs) on every CPU schedule, stacks and the paper's shape, against the plain f32 reference
// within the bound bf16's 8-bit significand gives (and farther from it than f32 is: the operands were rounded), the
// dot-product kernel a target with avx512_bf16 gets, and the errors for what has no bf16 path.
// On a host without avx512_bf16 the layer runs emulated; on one with it (AMD Zen 4/5, Intel Sapphire Rapids) the same
// tests run the vdpbf16ps kernel.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "harness/experiment.h"
#include "nn/qrnn_layer.h"
#include "core/softmax_decoder.h"
#include "plugins/halide_gemms.h"
#include "plugins/lstm_halide.h"
#include "plugins/lstm_params.h"
#include "reference/baselines.h"
#include "nn/stack.h"
#include "plugins/model.h"
#include "reference/reference.h"
#include "runtime/amd_isa_check.h"
#include "runtime/compare.h"
#include "runtime/seeded_fill.h"
#include "nn/layer.h"
#include "reference/baselines_backward.h"
#include "runtime/stack_state.h"
#include "schedules/schedule.h"
#include "schedules/softmax_schedule.h"
#include "schedules/training_schedule.h"
#include "sweep/results_file.h"
#include "tests/support/bench_rows.h"
#include "tests/support/cli.h"
#include "tests/support/precision_case.h"
#include "tests/support/verified_run.h"

using namespace qrnn;
using qrnn::test::assembly_of;
using qrnn::test::max_abs;
using qrnn::test::verified_error;

namespace {
using qrnn::test::kF32Tolerance;
using Shape = qrnn::test::LayerCase;

ModelConfig config(const std::string &pooling, int64_t k, const Shape &s, const std::string &schedule = "tuned") {
    return qrnn::test::precision_config("bf16", pooling, k, s, schedule);
}


struct Outputs {
    Tensor<float> h;                      // the bf16 layer's
    ref::StackOutput f32_ref, bf16_ref;   // the double reference's, plain and with rounded operands
    double bound = 0;                     // docs/precision.md: max |h_bf16 - h_f32ref| allowed
};

// max over (t, b, g, h) of sum |w| |x| (bias excluded): the scale of a pre-activation's rounding error.
double max_abs_products(const Tensor<double> &x, const Tensor<double> &history, const LayerParams<double> &p) {
    auto absolute = [](Tensor<double> v) {
        for (double &e : v.data) e = std::fabs(e);
        return v;
    };
    LayerParams<double> a{absolute(p.weights), Tensor<double>(p.bias.shape)};
    Tensor<double> s = ref::masked_conv(absolute(x), absolute(history), a);
    double worst = 0;
    for (double e : s.data) worst = std::max(worst, e);
    return worst;
}

Outputs run_one_layer(const ModelConfig &cfg) {
    nn::LayerStack stack(cfg);
    std::vector<nn::State> states = stack.initial_state(cfg.batch);
    const Tensor<float> x = init_input(cfg);
    Outputs out;
    out.h = stack.forward(x, states, nullptr);
    auto p = stack.layer(0).params();
    std::vector<LayerParams<double>> params{{convert<double>(*p[0].value), convert<double>(*p[1].value)}};
    StackState<double> s1, s2;
    s1.layers = s2.layers = {convert<double>(nn::layer_state(stack.initial_state(cfg.batch)[0]))};
    ModelConfig plain = cfg;
    plain.precision = "f32";
    out.f32_ref = ref::stack_forward(plain, params, convert<double>(x), s1);
    out.bf16_ref = ref::stack_forward(cfg, params, convert<double>(x), s2);
    // Each operand within a relative 2^-9 of its value, a product within 2^-8 (+2^-18): a pre-activation within
    // E = 2^-8 max sum|w||x|; gates within E (tanh' <= 1, sigmoid' <= 1/4); the scan adds per step at most
    // 1.25 E + |c_{t-1}| E / 4 with |c_t| <= t (ifo; <= 1 for f, fo): |dh_T| <= E (1.25 T + T^2 / 8 + 0.25).
    const double E = std::ldexp(1.0, -8) * (1 + std::ldexp(1.0, -10)) *
                     max_abs_products(convert<double>(x), convert<double>(nn::layer_state(stack.initial_state(cfg.batch)[0]).history), params[0]);
    const double T = static_cast<double>(cfg.seq);
    out.bound = E * (1.25 * T + T * T / 8 + 0.25);
    return out;
}

double max_abs_diff(const Tensor<float> &a, const Tensor<double> &b) {
    double worst = 0;
    for (size_t i = 0; i < a.size(); i++) worst = std::max(worst, std::fabs(a.data[i] - b.data[i]));
    return worst;
}
}  // namespace

TEST(Bf16Layer, EveryCpuScheduleMatchesTheRoundedReference) {
    for (const char *schedule : {"fused", "chunked-scan", "naive"})
        for (const Shape &s : {Shape{1, 1, 1, 1}, Shape{9, 4, 21, 40}, Shape{2, 3, 33, 17}}) {
            ModelConfig cfg = config("fo", 3, s, schedule);
            EXPECT_LE(verified_error(cfg), kF32Tolerance) << cfg.describe();
        }
}

// Above layer 0 an input is the layer below's output, float32 here and double in the reference: where one lies
// within that difference of a bf16 rounding boundary the two round apart, a whole bf16 step (2^-8 relative) on that
// operand (measured 7e-5 of max|h| at this shape). With both the same (L = 1, or L = 2 without masks): f32's bound.
TEST(Bf16Layer, StackOfThreeWithMasksMatchesTheRoundedReference) {
    ModelConfig cfg = config("ifo", 2, {11, 3, 9, 21});
    cfg.layers = 3, cfg.stochastic = true, cfg.zoneout = 0.3, cfg.dropout = 0.2, cfg.seed = 7;
    EXPECT_LE(verified_error(cfg), 1e-3) << cfg.describe();
    cfg.layers = 2, cfg.stochastic = false;
    EXPECT_LE(verified_error(cfg), kF32Tolerance) << cfg.describe();
}

// A CPU without avx512_bf16 (AMD Zen 3, many Intel Xeons) runs the same algorithm with each pair's products
// widened and added in f32: the AVX2 target on every machine, so that a host with the dot product tests it too.
TEST(Bf16Layer, FallbackWithoutTheDotProductTrainsLikeTheRoundedReference) {
    for (const char *pass : {"inference", "training"}) {
        ModelConfig cfg = config("ifo", 3, {5, 3, 9, 21});
        cfg.target = qrnn::test::kAvx2Target, cfg.pass = pass;
        EXPECT_LE(verified_error(cfg), 5e-4) << cfg.describe();  // HalideBackward.Bf16MatchesTheRoundedReference's
    }
}

TEST(Bf16Layer, PaperShapeMatchesTheRoundedReference) {
    EXPECT_LE(verified_error(config("fo", 2, {32, 4, 320, 320})), kF32Tolerance);
}

// Within the bf16 bound of the plain reference, and farther from it than float32 gets: the operands were rounded.
TEST(Bf16Layer, ErrorAgainstF32IsBf16RoundingWithinItsBound) {
    for (const char *pooling : {"f", "fo", "ifo"})
        for (const Shape &s : {Shape{1, 1, 1, 1}, Shape{9, 4, 21, 40}, Shape{32, 4, 320, 320}}) {
            ModelConfig cfg = config(pooling, 2, s);
            Outputs o = run_one_layer(cfg);
            const double err = max_abs_diff(o.h, o.f32_ref.h), scale = max_abs(o.f32_ref.h);
            EXPECT_LE(err, o.bound + kF32Tolerance * scale) << cfg.describe();
            EXPECT_LE(max_abs_diff(o.h, o.bf16_ref.h), kF32Tolerance * scale) << cfg.describe();
            if (s.n * s.m > 1) EXPECT_GT(err, kF32Tolerance * scale) << cfg.describe() << ": bf16 ran as f32";
        }
}

namespace {
using qrnn::test::kDotTarget;

std::string forward_assembly(const std::string &target_name) { return qrnn::test::layer_assembly(Precision::bf16, target_name); }

std::string backward_assembly(const std::string &target_name) {
    const Halide::Target target(target_name);
    const TrainingSchedule &s = find_training_schedule("tuned");
    BackwardInputs in;
    in.fwd.precision = Precision::bf16;
    Halide::Pipeline p = build_training_backward(s, in, find_pooling("fo"), target, merge_knobs(s, {}, target));
    return assembly_of(p, in.arguments(), target, "bf16_backward");
}


// The text of the functions whose label contains `part` (a Func's parallel loop bodies: "par_for_<func>_...").
std::string functions_named(const std::string &text, const std::string &part) {
    std::istringstream lines(text);
    std::string line, out;
    bool inside = false;
    while (std::getline(lines, line)) {
        const bool label = !line.empty() && line[0] != '.' && !std::isspace(static_cast<unsigned char>(line[0])) && line[0] != '#' && line.find(':') != std::string::npos;
        if (label) inside = line.find(part) != std::string::npos;
        if (inside) out += line + "\n";
    }
    return out;
}
}  // namespace

// Halide 14 compiles avx512_sapphirerapids for LLVM's sapphirerapids CPU, which has AVX512-FP16 and AVX-VNNI; AMD's
// Zen 4 (and for AVX512-FP16 Zen 5) runs the target's dot products but not those. assembly_of fails a kernel that
// holds one (a 16-bit gather started with vmovw was a SIGILL on Zen 5); this is its detector on known text.
TEST(Bf16Kernel, DetectsInstructionsAmdLacks) {
    const std::string text = "\tvmovw\t(%r11,%rsi,2), %xmm2\n\t{vex}\tvpdpbusd\t%ymm1, %ymm2, %ymm3\n\tvaddph\t%zmm1, %zmm2, %zmm3\n"
                             "\tvcvtph2ps\t%xmm1, %ymm2\n\tvcvtps2ph\t$4, %ymm1, %xmm2\n\tvdpbf16ps\t%zmm1, %zmm2, %zmm3\n"
                             "\tvpdpbusd\t%zmm1, %zmm2, %zmm3\n\tvpinsrw\t$1, (%rax), %xmm2, %xmm2\nvmovw_label:\n   17bc6:\tvmovw  (%r12,%rax,2),%xmm0\n";
    EXPECT_EQ(instructions_amd_lacks(text), (std::vector<std::string>{"vmovw", "{vex} vpdpbusd", "vaddph", "vmovw"}));
}

// Sapphire Rapids' feature (Halide's name for avx512_bf16 + vnni): the conv's register tiles are vdpbf16ps on
// dense loads of the weight pairs (no per-lane gathers). (A target without it cannot emit the instruction: what
// such a target runs is checked below, Bf16Layer.FallbackWithoutTheDotProductTrainsLikeTheRoundedReference.)
TEST(Bf16Kernel, DotProductTargetEmitsVdpbf16psOnDenseLoads) {
    const std::string dot = forward_assembly(kDotTarget);
    EXPECT_GE(qrnn::test::count_of(dot, "vdpbf16ps"), 20u);  // a 4 x 6 register tile: 24 per pair of input channels
    EXPECT_EQ(qrnn::test::count_of(dot, "vpinsrw"), 0u);
}

// The training step's dW (pairs of b) and dX (pairs of h) run on the dot product too: their register tiles (dW 2 x 6
// and dX 4 x 3 vectors by default: 12 per pair each) are vdpbf16ps, with no per-lane inserts in the GEMMs' loops.
TEST(Bf16Kernel, BackwardGemmsEmitVdpbf16ps) {
    const std::string dot = backward_assembly(kDotTarget);
    for (const char *gemm : {"par_for_dweights_", "par_for_dinput_"}) {
        const std::string text = functions_named(dot, gemm);
        EXPECT_GE(qrnn::test::count_of(text, "vdpbf16ps"), 12u) << gemm;
        EXPECT_EQ(qrnn::test::count_of(text, "vpinsrw"), 0u) << gemm;
    }
}

// lstm-halide's GEMMs on the dot product: forward, row_gemm's 2 x 8 register tile (16 per pair) and the step's 1 vector
// x 4 gates x 4 rows (16 per pair); backward, weight_grad's (dW, dR) and the backward step's R^T dpre; dense loads of
// the weight pairs.
TEST(Bf16Kernel, LstmHalideGemmsEmitVdpbf16ps) {
    auto assemblies = [] {
        const Halide::Target target(kDotTarget);
        Halide::Pipeline row = row_gemm_pipeline(Precision::bf16, target), wg = weight_grad_pipeline(Precision::bf16, target);
        Halide::Pipeline back = lstm_step_back_pipeline(Precision::bf16, target);
        LstmStep step(false, target.natural_vector_size<float>(), Precision::bf16);
        schedule_lstm_step(step, target);
        Halide::Pipeline cell(step.cell);
        return std::vector<std::string>{assembly_of(row, row.infer_arguments(), target, "bf16_row_gemm"),
                                        assembly_of(cell, cell.infer_arguments(), target, "bf16_lstm_step"),
                                        assembly_of(wg, wg.infer_arguments(), target, "bf16_weight_grad"),
                                        assembly_of(back, back.infer_arguments(), target, "bf16_lstm_step_back")};
    };
    for (const std::string &text : assemblies()) {
        EXPECT_GE(qrnn::test::count_of(text, "vdpbf16ps"), 16u);
        EXPECT_EQ(qrnn::test::count_of(text, "vpinsrw"), 0u);
    }
}

std::string decoder_assembly(const std::string &target_name) {
    const Halide::Target target(target_name);
    DecoderInputs in;
    DecoderFuncs F = define_softmax_decoder(in, kDecoderVocabBlock, cpu_decoder_panels(target), Precision::bf16);
    schedule_softmax_decoder_cpu(F, target);
    Halide::Pipeline p({F.row_loss, F.dhidden, F.dweights, F.dbias});
    return assembly_of(p, in.training_arguments(true, Precision::bf16), target, "bf16_decoder");
}

// The LM decoder's three GEMMs (logits over pairs of units, dhidden over pairs of words, dweights over pairs of rows) on
// the dot product: 16 per pair in a register tile of 2 x 8 vectors with 32 registers, no per-lane inserts.
TEST(Bf16Kernel, DecoderGemmsEmitVdpbf16ps) {
    const std::string dot = decoder_assembly(kDotTarget);
    for (const char *gemm : {"par_for_decoder_logits", "par_for_decoder_dhidden_acc", "par_for_decoder_dweights"}) {
        const std::string text = functions_named(dot, gemm);
        EXPECT_GE(qrnn::test::count_of(text, "vdpbf16ps"), 16u) << gemm;
        EXPECT_EQ(qrnn::test::count_of(text, "vpinsrw"), 0u) << gemm;
    }
}

TEST(Bf16Errors, WhatHasNoBf16PathSaysSo) {
    auto message = [](const ModelConfig &cfg) {
        try {
            validate_model_config(cfg);
        } catch (const Error &e) {
            return std::string(e.what());
        }
        return std::string();
    };
    ModelConfig bad = config("fo", 2, {4, 2, 8, 8});
    bad.precision = "fp8";
    EXPECT_EQ(message(bad), "--precision must be f32, bf16 or int8 (got 'fp8')");
    ModelConfig lstm = config("fo", 2, {4, 2, 8, 8});
    lstm.model = "encdec";
    EXPECT_EQ(message(lstm), "model 'encdec' runs in f32 only (got --precision bf16)");
    lstm.pass = "training";
    for (const char *model : {"lstm-halide", "lstm-onednn", "cnn"}) {  // train in bf16 (lstm-onednn where oneDNN can: below)
        lstm.model = model;
        EXPECT_EQ(message(lstm), "") << model;
    }
    // A model whose inference has bf16 and whose training has not (a plugin registered here, as a user's would be).
    ModelPlugin f32_training = find_model("cnn");
    f32_training.name = "test-bf16-inference-only";
    f32_training.options = {"window", "layers", "precision"};
    register_model(f32_training);
    lstm.model = f32_training.name;
    EXPECT_EQ(message(lstm), "model 'test-bf16-inference-only' trains in f32 only (got --precision bf16; its inference runs in it)");
    EXPECT_THROW(check_precision(Precision::bf16, Halide::Target("host-cuda")), Error);
    // A sequence task refuses it too, before anything trains (it once trained such a model in f32 silently).
    const qrnn::test::CliResult seq = qrnn::test::run_cli("train --task reverse --model encdec --precision bf16");
    EXPECT_NE(seq.exit_code, 0);
    EXPECT_NE(seq.output.find("qrnn train: error: model 'encdec' runs in f32 only (got --precision bf16)"), std::string::npos)
        << seq.output;
    EXPECT_THROW(parse_precision("BF16"), Error);
}

// `qrnn bench --what gemm-bf16 --quick`: per quick width the bf16 conv GEMM against oneDNN's bf16 GEMM (named, in
// GFLOP/s, a median of per-round ratios against 0.85) and the bf16 layer's forward and training step and the LM
// decoder's training call against the f32 ones (against 1.6). Timing never decides pass/fail.
TEST(Bf16Bench, QuickRowsAreWellFormed) {
    const qrnn::test::QuickBench bench = qrnn::test::run_quick_bench("gemm-bf16");
    ASSERT_EQ(bench.cli.exit_code, 0) << bench.cli.output;
    int gemms = 0, layers = 0;
    for (const qrnn::test::BenchRow &row : bench.rows) {
        if (row.benchmark == "conv GEMM bf16 vs oneDNN bf16 GEMM") {
            gemms++;
            EXPECT_NE(row.reference.find("dnnl_gemm_bf16bf16f32"), std::string::npos) << row.reference;
            EXPECT_EQ(qrnn::test::bench_quantity(row.ours).second, "GFLOP/s") << row.ours;
            EXPECT_TRUE(qrnn::test::is_round_ratio_row(row, 0.85));
        } else if (row.benchmark == "layer forward bf16 vs f32 (f32/bf16)" ||
                   row.benchmark == "layer training step bf16 vs f32 (f32/bf16)" ||
                   row.benchmark == "decoder training bf16 vs f32 (f32/bf16)") {
            layers++;
            EXPECT_TRUE(std::isfinite(row.ratio) && row.ratio > 0) << row.ratio;
            EXPECT_EQ(row.target, 1.6);
        }
    }
    EXPECT_EQ(gemms, 2);
    EXPECT_EQ(layers, 6);
}

// `qrnn run --pass training --precision bf16 --verify` at the paper's width (its dW tiles, guarded at the output's
// edge, make bounds inference ask for more rows of the packed dpre than m), against the rounded reference within
// the bf16 training step's default tolerance, which the verdict names.
TEST(Bf16Training, CliVerifiesAStepAtThePapersWidth) {
    const qrnn::test::CliResult r = qrnn::test::run_cli(
        "run --pass training --precision bf16 --verify --batch 3 --seq 5 --input 320 --hidden 320 --repeats 1 --warmup 0");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("verify: all within max relative error 1.00e-04 (bf16: 2.00e-03)"), std::string::npos)
        << r.output;
}

// A sweep's verify applies the same default (runtime/compare.h): a bf16 training step at 320 within 2e-3, recorded in
// its row's tolerance column; a tolerance the sweep sets is the one applied (1e-6 fails the same step).
TEST(Bf16Training, SweepVerifiesAStepAtItsOwnDefaultTolerance) {
    const std::string base = "base: {pass: training, precision: bf16, batch: 3, seq: 5, input: 320, hidden: 320, "
                             "verify: true, repeats: 1, warmup: 0";
    for (const std::string tolerance : {"", ", tolerance: 1e-6"}) {
        const std::string yaml = qrnn::test::write_scratch(
            "bf16_verify" + std::to_string(tolerance.size()) + ".yaml", "name: bf16_verify\n" + base + tolerance + "}\ngrid: {seed: [1]}\n");
        const std::string out = qrnn::test::scratch_path("bf16_verify" + std::to_string(tolerance.size()) + ".h5");
        const qrnn::test::CliResult r = qrnn::test::run_cli("sweep " + yaml + " -o " + out);
        const sweep::ResultTable t = sweep::read_results(out);
        ASSERT_EQ(t.rows(), 1u) << r.output;
        EXPECT_EQ(t.num(0, "tolerance"), tolerance.empty() ? kBf16Tolerance : 1e-6);
        EXPECT_EQ(t.str(0, "status"), tolerance.empty() ? "ok" : "check_failed") << r.output;
    }
}

// The CNN baseline's bf16 inference (the QRNN's masked conv, core/masked_conv.h): against the double reference with
// the same operands rounded, at f32's tolerance for one layer (every shape has n * m > 1, so f32 would fail it). Two
// layers: the second reads the first's f32 output (double in the reference), which may round apart (as the stack's).
TEST(Bf16Baselines, CnnMatchesTheRoundedReference) {
    for (const char *model : {"cnn", "cnn-maxpool"})
        for (const Shape &s : {Shape{1, 1, 2, 1}, Shape{9, 4, 21, 40}, Shape{2, 3, 33, 17}, Shape{32, 4, 320, 320}}) {
            ModelConfig cfg = config("fo", 3, s);
            cfg.model = model;
            EXPECT_LE(verified_error(cfg), kF32Tolerance) << cfg.describe();
            cfg.layers = 2;
            EXPECT_LE(verified_error(cfg), 1e-3) << cfg.describe();
        }
}

namespace {
using GotWant = std::pair<const Tensor<float> *, const Tensor<double> *>;
// A baseline's bf16 training step against a reference: the worst of the pairs (each relative to its own scale) within
// `rounded` of the reference with rounded operands, or within 4 x 2^-8 of the f32 one and, if `differs`, farther from
// it than f32's tolerance (the step did run in bf16).
void expect_bf16_step(const std::vector<GotWant> &pairs, Precision reference, double rounded, bool differs, const std::string &what) {
    double worst = 0;
    for (const auto &[got, want] : pairs) worst = std::max(worst, compare(*got, *want).rel());
    if (reference == Precision::bf16) {
        EXPECT_LE(worst, rounded) << what << ": against the rounded reference";
        return;
    }
    EXPECT_LE(worst, kBf16UnroundedTolerance) << what << ": against the f32 reference (4 x 2^-8)";
    if (differs) EXPECT_GT(worst, kF32Tolerance) << what << ": no farther from f32 than f32 is";
}
// `qrnn run --pass training --precision bf16 --verify` of a 2-layer stack of `model` at the paper's width; its output.
std::string expect_cli_verifies_bf16_training(const std::string &model) {
    const qrnn::test::CliResult r = qrnn::test::run_cli("run --model " + model + " --pass training --precision bf16 --verify "
                                                        "--batch 3 --seq 7 --input 65 --hidden 320 --window 3 --layers 2 "
                                                        "--repeats 1 --warmup 0");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("verify: all within"), std::string::npos) << r.output;
    return r.output;
}
}  // namespace

// The CNN's bf16 training step (forward and the QRNN's backward GEMMs with one gate, plugins/cnn_backward.h) on
// awkward shapes (T = 1, B = 1, odd widths, k > T) and the paper's width: y and every gradient against the reference
// with the same operands rounded, within 5e-4 of each tensor's largest value (dpre is float here and double there, so
// one may round a bf16 step apart, as the QRNN's: docs/precision.md); against the plain reference within 4 x 2^-8 and
// farther than f32's tolerance (it did run in bf16). Then `qrnn run --pass training --verify` of a 2-layer stack.
TEST(Bf16Baselines, CnnTrainingStepMatchesTheRoundedReference) {
    struct Case { int64_t T, B, n, m, k; };
    for (const Case &s : {Case{1, 1, 3, 1, 1}, Case{9, 4, 21, 40, 2}, Case{2, 3, 33, 17, 3}, Case{20, 3, 320, 320, 2}}) {
        ModelConfig cfg;
        cfg.model = "cnn", cfg.precision = "bf16", cfg.pass = "training";
        cfg.seq = s.T, cfg.batch = s.B, cfg.input = s.n, cfg.hidden = s.m, cfg.window = s.k, cfg.seed = 5;
        auto layer = nn::make_layer(cfg, 0);
        const Tensor<float> x = init_input(cfg);
        Tensor<float> y, dx, dy_out({s.T, s.B, s.m});
        seeded_fill(dy_out, 5, 0x5eed, 1.0);
        nn::State state = layer->initial_state(s.B);
        auto tape = layer->make_tape();
        layer->forward(x, state, y, tape.get());
        layer->zero_grads();
        layer->backward(*tape, dy_out, nullptr, &dx, nullptr);
        auto p = layer->params();  // weights, bias
        const std::vector<LayerParams<double>> params{{convert<double>(*p[0].value), convert<double>(*p[1].value)}};
        const std::string what = cfg.describe();
        for (Precision reference : {Precision::bf16, Precision::f32}) {
            const Tensor<double> ref_y = ref::cnn_forward(convert<double>(x), params, reference);
            const ref::CnnGrads g = ref::cnn_backward(convert<double>(x), params, convert<double>(dy_out), reference);
            expect_bf16_step({{&y, &ref_y}, {p[0].grad, &g.layers[0].weights}, {p[1].grad, &g.layers[0].bias}, {&dx, &g.dx}},
                             reference, 5e-4, s.n * s.m > 3, what);
        }
    }
    expect_cli_verifies_bf16_training("cnn");
}

// lstm-halide's bf16 training step (its forward as above; the backward's GEMMs dx = dpre W^T, dW = x^T dpre, dR = h^T dpre,
// each step's R^T dpre and dh0 on pairs of bf16 operands) on awkward shapes (T = 1, B = 1, odd widths) and the paper's
// width, from a nonzero state: y, every gradient, dh0 and dc0 against the reference with the same operands rounded,
// within 2e-3 of each tensor's largest value (h and dpre are float here and double there and may round a bf16 step
// apart, as the QRNN's); against the plain reference within 4 x 2^-8 and farther than f32's tolerance.
TEST(Bf16Baselines, LstmHalideTrainingStepMatchesTheRoundedReference) {
    for (const Shape &s : {Shape{1, 1, 3, 5}, Shape{7, 3, 33, 17}, Shape{2, 4, 20, 40}, Shape{9, 3, 320, 320}}) {
        ModelConfig cfg = config("fo", 2, s);
        cfg.model = "lstm-halide", cfg.pass = "training";
        auto layer = nn::make_layer(cfg, 0);
        const Tensor<float> x = init_input(cfg);
        nn::State state = layer->initial_state(s.B), d_initial = layer->initial_state(s.B);
        seeded_fill(state.at("h"), 5, 0x5eed1, 0.5), seeded_fill(state.at("c"), 5, 0x5eed2, 0.5);
        const Tensor<double> h0 = convert<double>(state.at("h")), c0 = convert<double>(state.at("c"));
        Tensor<float> y, dx, dy({s.T, s.B, s.m});
        seeded_fill(dy, 5, 0x5eed3, 1.0);
        auto tape = layer->make_tape();
        layer->forward(x, state, y, tape.get());
        layer->zero_grads();
        layer->backward(*tape, dy, nullptr, &dx, &d_initial);
        auto p = layer->params();  // w_input, w_recurrent, bias
        const LstmParams<double> params{convert<double>(*p[0].value), convert<double>(*p[1].value), convert<double>(*p[2].value)};
        const Tensor<double> zeros(h0.shape);
        for (Precision reference : {Precision::bf16, Precision::f32}) {
            const Tensor<double> ref_y = ref::lstm_forward(convert<double>(x), params, h0, c0, reference).h;
            const ref::LstmGrads g = ref::lstm_backward(convert<double>(x), params, h0, c0, convert<double>(dy), zeros, zeros, reference);
            expect_bf16_step({{&y, &ref_y}, {p[0].grad, &g.params.w_input}, {p[1].grad, &g.params.w_recurrent},
                              {p[2].grad, &g.params.bias}, {&dx, &g.dx}, {&d_initial.at("h"), &g.dh0}, {&d_initial.at("c"), &g.dc0}},
                             reference, kBf16Tolerance, true, cfg.describe());
        }
    }
    expect_cli_verifies_bf16_training("lstm-halide");
}

// The dense stack (qrnn-dense: the plain layer's pipelines on its concatenated inputs) and the bidirectional
// variable-length one in bf16, through `qrnn run`'s verifiers; against the rounded reference on awkward shapes:
// tests/test_dense.cpp, tests/test_seq_layer.cpp. Their default tolerances differ (ModelPlugin::bf16_tolerance): the
// verdict names which model was held to which.
TEST(Bf16Training, OtherStacksVerifyThroughTheCli) {
    const std::string output = expect_cli_verifies_bf16_training("qrnn-dense,qrnn-bidir-varlen");
    EXPECT_NE(output.find("(bf16: 2.00e-03 qrnn-dense, 3.91e-03 qrnn-bidir-varlen)"), std::string::npos) << output;
}

// lstm-halide in bf16 (x W on row_gemm's pairs, h R on the step's: plugins/lstm_halide.h) against the double reference
// with the same operands rounded. One step of one layer rounds exactly what the reference rounds (x, the weights and h0
// are all float data): float32's tolerance, which the f32 reference misses by far at these shapes (checked below: a
// model that ignored bf16 fails). Over steps and layers h is rounded from a float here and from a double there, and a
// value at a rounding boundary may round a bf16 step apart: 1e-3, as the CNN's second layer.
TEST(Bf16Baselines, LstmHalideMatchesTheRoundedReference) {
    for (const Shape &s : {Shape{1, 1, 2, 1}, Shape{1, 4, 21, 40}, Shape{1, 3, 33, 17}, Shape{1, 20, 320, 320}}) {
        ModelConfig cfg = config("fo", 2, s);
        cfg.model = "lstm-halide";
        EXPECT_LE(verified_error(cfg), kF32Tolerance) << cfg.describe();
        if (s.n * s.m > 2) {
            const LstmData d = init_lstm_data(cfg);
            std::vector<LstmParams<double>> layers{{convert<double>(d.layers[0].w_input),
                                                    convert<double>(d.layers[0].w_recurrent), convert<double>(d.layers[0].bias)}};
            auto ref = [&](Precision p) {
                return ref::lstm_stack_forward(convert<double>(d.x), layers, convert<double>(d.h0), convert<double>(d.c0), p).h;
            };
            const Tensor<double> rounded = ref(Precision::bf16), plain = ref(Precision::f32);
            EXPECT_GT(max_abs_diff(convert<float>(plain), rounded), kF32Tolerance * max_abs(rounded)) << cfg.describe();
        }
        cfg.seq = 9, cfg.layers = 2;
        EXPECT_LE(verified_error(cfg), 1e-3) << cfg.describe();
    }
}

// oneDNN's bf16 LSTM, the baseline bf16 runs against: on a CPU with avx512_bf16 it runs; elsewhere oneDNN has only its
// reference implementation, and the run is skipped naming why. QRNN_ONEDNN_BF16_ANY_IMPL=1 runs that one anyway, to
// check the bf16 path's results against the reference with rounded operands: h and the outputs in bf16 (rounded where
// the reference keeps doubles), within 3e-2 of max|h| (a few bf16 steps, 2^-8 each; measured 2e-3 at this shape) and
// farther than f32's 1e-4 (it did run in bf16).
TEST(Bf16Baselines, OnednnLstmRunsInBf16OrSaysWhyNot) {
    const std::string run = "run --model lstm-onednn --precision bf16 --verify --batch 4 --seq 9 --input 33 --hidden 17 "
                            "--layers 2 --repeats 1 --warmup 0 --tolerance 3e-2";
    const qrnn::test::CliResult here = qrnn::test::run_cli(run);
    if (here.output.find("skipped: model 'lstm-onednn' unavailable: oneDNN has only its reference bf16 LSTM") == std::string::npos)
        EXPECT_EQ(here.exit_code, 0) << here.output;
    setenv("QRNN_ONEDNN_BF16_ANY_IMPL", "1", 1);
    const qrnn::test::CliResult any = qrnn::test::run_cli(run);
    const qrnn::test::CliResult strict = qrnn::test::run_cli(run.substr(0, run.find("--tolerance")) + "--tolerance 1e-4");
    unsetenv("QRNN_ONEDNN_BF16_ANY_IMPL");
    EXPECT_EQ(any.exit_code, 0) << any.output;
    EXPECT_EQ(strict.exit_code, 1) << strict.output;
}

// oneDNN's bf16 LSTM training step (plugins/lstm_onednn_layer.cpp: x, h, y and the weights bf16; c, the bias and the
// gradients f32), where it runs as above: y and every gradient against the plain f32 reference at the default bf16
// tolerance of lstm-onednn (4 x 2^-8: oneDNN rounds values of its own, runtime/compare.h), on awkward shapes and a
// 2-layer stack; farther from it than f32's 1e-4 (it did run in bf16). On this CPU without the variable: skipped.
TEST(Bf16Baselines, OnednnLstmTrainsInBf16OrSaysWhyNot) {
    const std::string run = "run --model lstm-onednn --pass training --precision bf16 --verify --repeats 1 --warmup 0 ";
    const qrnn::test::CliResult here = qrnn::test::run_cli(run + "--batch 4 --seq 9 --input 33 --hidden 17 --layers 2");
    if (here.output.find("skipped: model 'lstm-onednn' unavailable: oneDNN has only its reference bf16 LSTM") == std::string::npos)
        EXPECT_EQ(here.exit_code, 0) << here.output;
    setenv("QRNN_ONEDNN_BF16_ANY_IMPL", "1", 1);
    for (const std::string shape : {"--batch 4 --seq 9 --input 33 --hidden 17 --layers 2", "--batch 1 --seq 1 --input 3 --hidden 5",
                                    "--batch 3 --seq 7 --input 64 --hidden 320"}) {
        const qrnn::test::CliResult any = qrnn::test::run_cli(run + shape);
        EXPECT_EQ(any.exit_code, 0) << any.output;
        EXPECT_NE(any.output.find("(bf16: 1.56e-02)"), std::string::npos) << any.output;
        const qrnn::test::CliResult strict = qrnn::test::run_cli(run + shape + " --tolerance 1e-4");
        EXPECT_EQ(strict.exit_code, 1) << strict.output;
    }
    unsetenv("QRNN_ONEDNN_BF16_ANY_IMPL");
}
