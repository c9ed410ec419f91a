// The variable-length / bidirectional QRNN layer (core/qrnn_seq.h): the double reference (reference/qrnn_seq.h)
// against central finite differences and against what it must equal (the plain layer for one direction and
// full lengths; each sequence run alone; the reverse direction = the plain layer on the time-reversed
// sequence); the Halide pipelines (nn::SeqQrnnLayer, "tuned" on the host) against the reference, forward and
// every gradient, on awkward shapes (T = 1, B = 1, odd widths, k > T, 2-3 layers) with zoneout and dropout
// on; bad lengths and stateful bidirectional use refused. Lower targets and "naive": test_seq_layer_targets.
#include <gtest/gtest.h>

#include "core/error.h"
#include "nn/qrnn_layer.h"
#include "nn/seq_layer.h"
#include "reference/qrnn_seq.h"
#include "runtime/compare.h"
#include "tests/support/finite_differences.h"
#include "tests/support/seq_check.h"

namespace qrnn::test {
namespace {
constexpr double kTolerance = 1e-4;

using Shape = SeqShape;
const auto &kShapes = kSeqShapes;

const SeqOptions kVariants[] = {{1, false}, {2, false}, {2, true}};
std::string name(const SeqOptions &o) { return o.directions == 1 ? "forward" : o.sum ? "bidir-sum" : "bidir-concat"; }

ModelConfig config(const Shape &s, const std::string &model, const std::string &schedule = "tuned") {
    return seq_config(s, model, schedule);
}
std::vector<int32_t> lengths_for(int64_t T, int64_t B) { return seq_test_lengths(T, B); }

// One layer's seeded problem in double.
struct LayerProblem {
    const PoolingVariant *variant;
    SeqOptions options;
    Tensor<double> x, dy, dc_final;
    std::vector<int32_t> lengths;
    LayerState<double> state;
    LayerParams<double> params;
    LayerMasks masks;
    int64_t time;

    LayerProblem(const std::string &pooling, const SeqOptions &o, const Shape &s, uint32_t seed)
        : variant(&find_pooling(pooling)), options(o), lengths(lengths_for(s.T, s.B)) {
        const int64_t rows = o.directions * variant->gate_count();
        x = seeded_tensor({s.T, s.B, s.n}, seed, 1);
        dy = seeded_tensor({s.T, s.B, s.m * o.out_width_factor()}, seed, 2);
        dc_final = seeded_tensor({o.directions, s.B, s.m}, seed, 3);
        state = {seeded_tensor({std::max<int64_t>(s.k - 1, 1), s.B, s.n}, seed, 4), seeded_tensor({s.B, s.m}, seed, 5, 0.5)};
        params = {seeded_tensor({rows, s.k, s.n, s.m}, seed, 6, 0.6), seeded_tensor({rows, s.m}, seed, 7, 0.6)};
        ModelConfig c = config(s, "qrnn-varlen");
        c.layers = 2;
        masks = layer_masks(c, 1);  // dropout and zoneout
        time = o.directions == 1 ? 5 : 0;
    }
    ref::SeqTrace trace() const { return ref::seq_trace(*variant, options, x, lengths, state, params, masks, time); }
    double loss() const {
        ref::SeqTrace tr = trace();
        return dot(tr.y, dy) + dot(ref::seq_final_cells(tr), dc_final);
    }
    ref::LayerGrads grads() const {
        return ref::seq_backward(*variant, options, x, lengths, state, params, masks, time, dy, dc_final);
    }
};

// Sequence b of a [T][B][w] tensor, its first `len` steps, as [len][1][w].
Tensor<double> sequence(const Tensor<double> &v, int64_t b, int64_t len) {
    Tensor<double> out({len, 1, v.dim(2)});
    for (int64_t t = 0; t < len; t++)
        for (int64_t c = 0; c < v.dim(2); c++) out(t, 0, c) = v(t, b, c);
    return out;
}
Tensor<double> batch_row(const Tensor<double> &v, int64_t b) {  // [B][w] -> [1][w]
    Tensor<double> out({1, v.dim(1)});
    for (int64_t c = 0; c < v.dim(1); c++) out(0, c) = v(b, c);
    return out;
}
double max_diff(const Tensor<double> &a, const Tensor<double> &b) {
    if (a.shape != b.shape) return 1e30;
    double d = 0;
    for (size_t i = 0; i < a.size(); i++) d = std::max(d, std::abs(a.data[i] - b.data[i]));
    return d;
}
}  // namespace

TEST(SeqReference, BackwardMatchesFiniteDifferences) {
    for (const SeqOptions &o : kVariants)
        for (const char *pooling : {"fo", "ifo", "f"})
            for (const Shape &s : kShapes) {
                // The reference's loops are the same at any size: the wide shapes are for the Halide tiles (below).
                if (s.T * s.n > 60 || s.m > 32) continue;
                LayerProblem p(pooling, o, s, 3);
                ref::LayerGrads g = p.grads();
                FdWorst fd = finite_difference_check({{"dx", {&p.x, &g.dx}},
                                                      {"weights", {&p.params.weights, &g.dweights}},
                                                      {"bias", {&p.params.bias, &g.dbias}},
                                                      {"c0", {&p.state.c, &g.dc0}},
                                                      {"history", {&p.state.history, &g.dhistory}}},
                                                     [&] { return p.loss(); });
                EXPECT_LE(fd.rel, 1e-6) << name(o) << " " << pooling << " T=" << s.T << " B=" << s.B << " k=" << s.k
                                        << ": worst " << fd.name;
            }
}

// One direction, every length T: the plain layer's reference exactly.
TEST(SeqReference, FullLengthForwardDirectionIsThePlainLayer) {
    LayerProblem p("ifo", {1, false}, kShapes[3], 4);
    std::fill(p.lengths.begin(), p.lengths.end(), static_cast<int32_t>(p.x.dim(0)));
    ref::SeqTrace tr = p.trace();
    ref::LayerOutput plain = ref::layer_forward(*p.variant, p.x, p.state, p.params, p.masks, p.time);
    EXPECT_EQ(max_diff(tr.y, plain.h), 0.0);
    ref::LayerGrads a = p.grads();
    Tensor<double> dc({p.x.dim(1), p.params.weights.dim(3)});
    std::copy(p.dc_final.data.begin(), p.dc_final.data.begin() + dc.size(), dc.data.begin());
    ref::LayerGrads b = ref::layer_backward(*p.variant, p.x, p.state, p.params, p.masks, p.time, p.dy, dc);
    EXPECT_LE(max_diff(a.dweights, b.dweights), 1e-12);
    EXPECT_LE(max_diff(a.dx, b.dx), 1e-12);
    EXPECT_LE(max_diff(a.dc0, b.dc0), 1e-12);
}

// Each sequence alone (batch of one, its own length, no masks: they are drawn per batch index) gives the
// batch's results: outputs (zeros past the end), final states, input gradients; weight gradients add up.
TEST(SeqReference, EachSequenceAloneEqualsTheBatch) {
    for (const SeqOptions &o : kVariants) {
        LayerProblem p("fo", o, {6, 4, 3, 5, 3, 1}, 5);
        p.masks = {};
        ref::SeqTrace tr = p.trace();
        Tensor<double> finals = ref::seq_final_cells(tr);
        ref::LayerGrads g = p.grads();
        Tensor<double> dweights_sum(g.dweights.shape);
        for (int64_t b = 0; b < p.x.dim(1); b++) {
            const int64_t len = p.lengths[b];
            LayerProblem alone = p;
            alone.x = sequence(p.x, b, len), alone.dy = sequence(p.dy, b, len), alone.lengths = {static_cast<int32_t>(len)};
            alone.state = {sequence(p.state.history, b, p.state.history.dim(0)), batch_row(p.state.c, b)};
            alone.dc_final = Tensor<double>({o.directions, 1, p.dc_final.dim(2)});
            for (int64_t d = 0; d < o.directions; d++)
                for (int64_t h = 0; h < p.dc_final.dim(2); h++) alone.dc_final(d, 0, h) = p.dc_final(d, b, h);
            ref::SeqTrace a = alone.trace();
            Tensor<double> y_full = sequence(tr.y, b, p.x.dim(0));
            EXPECT_EQ(max_diff(a.y, sequence(tr.y, b, len)), 0.0) << name(o) << " b=" << b;
            for (int64_t t = len; t < p.x.dim(0); t++)
                for (int64_t c = 0; c < y_full.dim(2); c++) EXPECT_EQ(y_full(t, 0, c), 0.0);
            Tensor<double> fa = ref::seq_final_cells(a);
            for (int64_t d = 0; d < o.directions; d++)
                for (int64_t h = 0; h < fa.dim(2); h++) EXPECT_EQ(fa(d, 0, h), finals(d, b, h)) << name(o) << " b=" << b;
            ref::LayerGrads ga = alone.grads();
            EXPECT_LE(max_diff(ga.dx, sequence(g.dx, b, len)), 1e-12) << name(o) << " b=" << b;
            for (int64_t t = len; t < p.x.dim(0); t++)
                for (int64_t c = 0; c < p.x.dim(2); c++) EXPECT_EQ(g.dx(t, b, c), 0.0);
            EXPECT_LE(max_diff(ga.dc0, batch_row(g.dc0, b)), 1e-12);
            for (size_t i = 0; i < dweights_sum.size(); i++) dweights_sum.data[i] += ga.dweights.data[i];
        }
        EXPECT_LE(max_diff(dweights_sum, g.dweights), 1e-10) << name(o);
    }
}

// The reverse direction is the plain layer (its own weight rows) on the time-reversed sequence from zero state.
TEST(SeqReference, ReverseDirectionIsThePlainLayerOnTheReversedSequence) {
    LayerProblem p("ifo", {2, false}, {7, 2, 3, 4, 3, 1}, 6);
    p.masks = {};
    std::fill(p.lengths.begin(), p.lengths.end(), 7);
    ref::SeqTrace tr = p.trace();
    const int64_t T = 7, B = 2, G = p.variant->gate_count(), m = 4;
    Tensor<double> reversed(p.x.shape);
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < B; b++)
            for (int64_t c = 0; c < 3; c++) reversed(t, b, c) = p.x(T - 1 - t, b, c);
    LayerParams<double> rows{leading_rows(p.params.weights, G, G), leading_rows(p.params.bias, G, G)};
    LayerState<double> zero{Tensor<double>(p.state.history.shape), Tensor<double>(p.state.c.shape)};
    ref::LayerOutput plain = ref::layer_forward(*p.variant, reversed, zero, rows, {}, 0);
    double diff = 0;
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < B; b++)
            for (int64_t h = 0; h < m; h++) diff = std::max(diff, std::abs(tr.y(t, b, m + h) - plain.h(T - 1 - t, b, h)));
    EXPECT_LE(diff, 1e-14);
}

class SeqHalide : public ::testing::TestWithParam<std::string> {};

TEST_P(SeqHalide, MatchesReferenceOnAwkwardShapes) {
    for (const Shape &s : kShapes) {
        ModelConfig cfg = config(s, GetParam());
        std::string worst;
        EXPECT_LE(seq_halide_vs_reference(cfg, worst), kTolerance) << cfg.describe() << ": worst " << worst;
    }
}

INSTANTIATE_TEST_SUITE_P(Models, SeqHalide, ::testing::Values("qrnn-varlen", "qrnn-bidir-varlen", "qrnn-bidir-sum"));

// bf16 (docs/precision.md): the conv and the backward's GEMMs over pairs of bf16 operands, as the plain layer's. Against
// the reference with the same operands rounded, within a bf16 training step's --verify default (layer 1 reads layer
// 0's output, float here and double there, which may round a bf16 step apart: tests/test_bf16.cpp); against the f32
// reference within 4 bf16 steps (2^-8), and farther than f32 gets (it did run in bf16). T = 1 with k > T, B = 1, odd
// widths, 2 layers (one m: one compile per model); both directions, variable lengths, summed and concatenated.
TEST(SeqHalideBf16, TrainingStepMatchesTheRoundedReference) {
    for (const char *model : {"qrnn-bidir-varlen", "qrnn-bidir-sum"})
        for (const Shape &s : {Shape{1, 2, 3, 33, 3, 2}, Shape{4, 1, 5, 33, 2, 2}, Shape{9, 4, 20, 33, 2, 2}}) {
            ModelConfig cfg = config(s, model);
            cfg.precision = "bf16";
            std::string worst, worst_f32;
            EXPECT_LE(seq_halide_vs_reference(cfg, worst), kBf16Tolerance) << cfg.describe() << ": worst " << worst;
            const double f32 = seq_halide_vs_reference(cfg, worst_f32, nullptr, "f32");
            EXPECT_LE(f32, kBf16UnroundedTolerance) << cfg.describe() << ": worst " << worst_f32;
            EXPECT_GT(f32, kTolerance) << cfg.describe() << ": bf16 ran as f32";
        }
}

// A width whose GEMM tiles "tuned" picks from m (schedules/seq_schedule.cpp tuned_knobs; with AVX-512 5 x 4
// tiles for the forward GEMM and dW, the gates tape padded to 80 rows and 4 steps; other ISAs their defaults).
TEST(SeqHalideTargets, WidthChosenTilesMatchTheReference) {
    ModelConfig cfg = config({5, 3, 9, 77, 2, 1}, "qrnn-bidir");
    std::string worst;
    EXPECT_LE(seq_halide_vs_reference(cfg, worst), kTolerance) << cfg.describe() << ": worst " << worst;
}

// Through the Halide layer too: each sequence alone gives the batch's output rows and final state.
TEST(SeqHalideTargets, EachSequenceAloneEqualsTheBatch) {
    ModelConfig cfg = config({6, 4, 3, 5, 3, 1}, "qrnn-bidir-varlen");
    cfg.stochastic = false;
    nn::SeqQrnnLayer layer(cfg, 0, nn::seq_model_options(cfg.model));
    const std::vector<int32_t> lengths = lengths_for(6, 4);
    layer.set_lengths(lengths);
    Tensor<float> x = convert<float>(seeded_tensor({6, 4, 3}, 1, 60)), y;
    nn::State state = layer.initial_state(4);
    layer.forward(x, state, y, nullptr);
    for (int64_t b = 0; b < 4; b++) {
        const int64_t len = lengths[b];
        Tensor<float> xb = convert<float>(sequence(convert<double>(x), b, len)), yb;
        layer.set_lengths({static_cast<int32_t>(len)});
        nn::State sb = layer.initial_state(1);
        layer.forward(xb, sb, yb, nullptr);
        double diff = 0;
        for (int64_t t = 0; t < 6; t++)
            for (int64_t c = 0; c < y.dim(2); c++)
                diff = std::max(diff, double(std::abs(y(t, b, c) - (t < len ? yb(t, 0, c) : 0.0f))));
        EXPECT_LE(diff, 1e-6) << "b=" << b;
        for (int64_t h = 0; h < 5; h++) {
            EXPECT_NEAR(state.at("c")(b, h), sb.at("c")(0, h), 1e-6);
            EXPECT_NEAR(state.at("c_reverse")(b, h), sb.at("c_reverse")(0, h), 1e-6);
        }
    }
}

void expect_error(const std::function<void()> &f, const std::string &text) {
    try {
        f();
        ADD_FAILURE() << "no error; expected one containing: " << text;
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
}

TEST(SeqHalideTargets, BadLengthsAndStatefulBidirectionalAreRefused) {
    ModelConfig cfg = config({4, 2, 3, 5, 2, 1}, "qrnn-bidir");
    nn::SeqQrnnLayer layer(cfg, 0, nn::seq_model_options(cfg.model));
    Tensor<float> x({4, 2, 3}), y;
    nn::State state = layer.initial_state(2);
    layer.set_lengths({4, 0});
    expect_error([&] { layer.forward(x, state, y, nullptr); }, "lengths[1] = 0 is outside [1, T] (T = 4)");
    layer.set_lengths({5, 2});
    expect_error([&] { layer.forward(x, state, y, nullptr); }, "lengths[0] = 5 is outside [1, T] (T = 4)");
    layer.set_lengths({4});
    expect_error([&] { layer.forward(x, state, y, nullptr); }, "lengths has 1 entries, the batch has 2 sequences");
    layer.set_lengths({});
    layer.forward(x, state, y, nullptr);
    expect_error([&] { layer.forward(x, state, y, nullptr); }, "the reverse direction has no state across calls");
}

}  // namespace qrnn::test
