// The densely connected QRNN stack (nn/dense_stack.h, reference/dense.h): the double reference backward
// against central finite differences; nn::DenseQrnn (the plain layer's pipelines reading their concatenated
// inputs in place) against the reference, forward and every gradient, on awkward shapes (T = 1, B = 1, odd
// widths, k > T, 2-3 layers) with zoneout and dropout on, from a non-zero carried state, for the CPU
// training schedules on the host and every lower target; chunked calls equal one whole call.
#include <gtest/gtest.h>

#include <iterator>

#include "core/error.h"
#include "nn/dense_stack.h"
#include "nn/stack.h"
#include "reference/dense.h"
#include "runtime/compare.h"
#include "schedules/cpu_target.h"
#include "tests/support/finite_differences.h"

namespace qrnn::test {
namespace {
constexpr double kTolerance = 1e-4;

struct Shape {
    int64_t T, B, n, m, k, L;
};
const Shape kShapes[] = {{1, 1, 1, 1, 1, 1}, {1, 2, 3, 5, 3, 2}, {4, 1, 5, 3, 2, 3}, {3, 3, 2, 7, 4, 2}, {9, 2, 20, 33, 2, 3}};

ModelConfig config(const Shape &s, const std::string &schedule = "tuned", const std::string &pooling = "fo") {
    ModelConfig c;
    c.model = "qrnn-dense", c.pooling = pooling, c.schedule = schedule;
    c.seq = s.T, c.batch = s.B, c.input = s.n, c.hidden = s.m, c.window = s.k, c.layers = s.L;
    c.stochastic = true, c.zoneout = 0.3, c.dropout = 0.25, c.seed = 5;
    return c;
}

// A seeded problem: parameters, input, a non-zero carried state at time 5, dL/dh and dL/dc_T.
struct Problem {
    ModelConfig cfg;
    std::vector<LayerParams<double>> params;
    Tensor<double> x, dh, dc_T;
    StackState<double> state;

    explicit Problem(const ModelConfig &c) : cfg(c) {
        params = convert<double>(init_params(c, ref::dense_layer_inputs(c)));
        x = convert<double>(init_input(c));
        state = initial_state<double>(c, ref::dense_layer_inputs(c));
        state.time = 5;
        uint32_t stream = 0x18000;
        for (auto &l : state.layers) {
            l.c = seeded_tensor(l.c.shape, c.seed, stream++, 0.5);
            l.history = seeded_tensor(l.history.shape, c.seed, stream++, 1.0);
        }
        dh = seeded_tensor({c.seq, c.batch, c.hidden}, c.seed, stream++);
        dc_T = seeded_tensor({c.layers, c.batch, c.hidden}, c.seed, stream++);
    }
    double loss() const {
        StackState<double> s = state;
        ref::StackOutput out = ref::dense_forward(cfg, params, x, s);
        return dot(out.h, dh) + dot(out.c_T, dc_T);
    }
};

// Row l of [L][B][m] as a float tensor [B][m].
Tensor<float> row(const Tensor<double> &all, int64_t l) {
    Tensor<float> r({all.dim(1), all.dim(2)});
    for (size_t i = 0; i < r.size(); i++) r.data[i] = static_cast<float>(all.data[l * r.size() + i]);
    return r;
}

// DenseQrnn from the problem's parameters and state: y and every gradient against ref::dense_backward (in the
// problem's precision, or in `reference_precision` when given).
double halide_vs_reference(const Problem &p, std::string &worst, const std::string &reference_precision = "") {
    nn::DenseQrnn block(p.cfg);
    nn::State state = block.initial_state(p.cfg.batch), d_final = state;
    state.time = p.state.time;
    for (int64_t l = 0; l < p.cfg.layers; l++) {
        block.layer_params(l) = convert<float>(p.params[l]);
        nn::DenseQrnn::set_layer_state(state, l, convert<float>(p.state.layers[l]));
        nn::DenseQrnn::set_layer_state(d_final, l, {Tensor<float>(state.at("history_" + std::to_string(l)).shape), row(p.dc_T, l)});
    }
    block.zero_grads();
    auto tape = block.make_tape();
    Tensor<float> y, dx;
    nn::State d_initial;
    block.forward(convert<float>(p.x), state, y, tape.get());
    block.backward(*tape, convert<float>(p.dh), &d_final, &dx, &d_initial);

    ModelConfig reference = p.cfg;
    if (!reference_precision.empty()) reference.precision = reference_precision;
    StackState<double> s = p.state;
    ref::StackOutput out = ref::dense_forward(reference, p.params, p.x, s);
    ref::StackGrads g = ref::dense_backward(reference, p.params, p.x, p.state, p.dh, p.dc_T);
    double max_rel = 0;
    auto check = [&](const std::string &name, const Tensor<float> &a, const Tensor<double> &r) {
        Comparison c = compare(a, r);
        double rel = c.finite ? c.rel() : 1e30;
        if (rel > max_rel) max_rel = rel, worst = name;
    };
    check("h", y, out.h);
    check("dx", dx, g.dx);
    auto params = block.params();
    for (int64_t l = 0; l < p.cfg.layers; l++) {
        const std::string layer = "layer_" + std::to_string(l) + "/";
        check(layer + "c_T", nn::DenseQrnn::layer_state(state, l).c, convert<double>(row(out.c_T, l)));
        check(layer + "weights", *params[2 * l].grad, g.layers[l].dweights);
        check(layer + "bias", *params[2 * l + 1].grad, g.layers[l].dbias);
        LayerState<float> d = nn::DenseQrnn::layer_state(d_initial, l);
        check(layer + "c0", d.c, g.layers[l].dc0);
        check(layer + "history", d.history, g.layers[l].dhistory);
    }
    return max_rel;
}
}  // namespace

TEST(DenseReference, BackwardMatchesFiniteDifferences) {
    for (const Shape &s : kShapes) {
        if (s.n * s.T > 60) continue;  // the FD loop re-runs the whole stack per element
        Problem p(config(s, "tuned", "ifo"));
        ref::StackGrads g = ref::dense_backward(p.cfg, p.params, p.x, p.state, p.dh, p.dc_T);
        std::vector<std::pair<std::string, std::pair<Tensor<double> *, const Tensor<double> *>>> pairs{{"dx", {&p.x, &g.dx}}};
        for (int64_t l = 0; l < p.cfg.layers; l++) {
            const std::string layer = "layer_" + std::to_string(l) + "/";
            pairs.push_back({layer + "weights", {&p.params[l].weights, &g.layers[l].dweights}});
            pairs.push_back({layer + "bias", {&p.params[l].bias, &g.layers[l].dbias}});
            pairs.push_back({layer + "c0", {&p.state.layers[l].c, &g.layers[l].dc0}});
            pairs.push_back({layer + "history", {&p.state.layers[l].history, &g.layers[l].dhistory}});
        }
        FdWorst fd = finite_difference_check(pairs, [&] { return p.loss(); });
        EXPECT_LE(fd.rel, 1e-6) << p.cfg.describe() << ": worst " << fd.name;
    }
}

// One dense layer is the plain layer; with two, layer 1 reads the input directly: with layer 0's weights
// and bias zero (so h_0 = 0), the output still follows x.
TEST(DenseReference, OneLayerIsPlainAndLayerOneReadsTheInput) {
    Problem one(config({5, 2, 4, 4, 2, 1}));
    one.cfg.stochastic = false;
    ModelConfig plain = one.cfg;
    plain.model = "qrnn";
    StackState<double> s = one.state, sd = one.state;
    sd.time = s.time = 0;
    EXPECT_EQ(ref::dense_forward(one.cfg, one.params, one.x, sd).h.data, ref::stack_forward(plain, one.params, one.x, s).h.data);

    Problem two(config({5, 2, 4, 4, 2, 2}));
    two.cfg.stochastic = false;
    for (auto *t : {&two.params[0].weights, &two.params[0].bias}) std::fill(t->data.begin(), t->data.end(), 0.0);
    auto run = [&] {
        StackState<double> st = two.state;
        return ref::dense_forward(two.cfg, two.params, two.x, st).h;
    };
    Tensor<double> before = run();
    two.x.data[0] += 0.5;
    EXPECT_NE(run().data, before.data);
}

TEST(DenseHalide, MatchesReferenceOnAwkwardShapes) {
    for (const char *schedule : {"tuned", "naive"})
        for (const Shape &s : kShapes) {
            Problem p(config(s, schedule));
            std::string worst;
            EXPECT_LE(halide_vs_reference(p, worst), kTolerance) << p.cfg.describe() << ": worst " << worst;
        }
}

TEST(DenseHalide, LowerTargetsMatchReference) {
    for (const Halide::Target &target : runnable_cpu_targets()) {
        if (target_isa(target) == target_isa(Halide::get_host_target())) continue;
        for (const Shape &s : {kShapes[1], kShapes[4]}) {
            ModelConfig cfg = config(s, "tuned", "ifo");
            cfg.target = target.to_string();
            Problem p(cfg);
            std::string worst;
            EXPECT_LE(halide_vs_reference(p, worst), kTolerance) << cfg.target << " " << cfg.describe() << ": worst " << worst;
        }
    }
}

// bf16 (docs/precision.md): every layer's GEMM operands rounded, the dense buffer f32. Against the reference with the
// same operands rounded: layers >= 1 read earlier outputs, float here and double there, which may round a bf16 step
// apart (as in the plain stack: tests/test_bf16.cpp), and layer 0's gradients gather every later layer's (measured
// 1.2e-3 at L = 3): within a bf16 training step's --verify default (kBf16Tolerance); against the f32 reference
// within 4 bf16 steps (2^-8), and farther than f32 gets (it did run in bf16). Awkward shapes and the paper's width.
TEST(DenseHalide, Bf16TrainingStepMatchesTheRoundedReference) {
    std::vector<Shape> shapes(std::begin(kShapes), std::end(kShapes));
    shapes.push_back({7, 2, 65, 320, 3, 2});
    for (const Shape &s : shapes) {
        ModelConfig cfg = config(s, "tuned", "ifo");
        cfg.precision = "bf16";
        Problem p(cfg);
        std::string worst, worst_f32;
        EXPECT_LE(halide_vs_reference(p, worst), kBf16Tolerance) << cfg.describe() << ": worst " << worst;
        const double f32 = halide_vs_reference(p, worst_f32, "f32");
        EXPECT_LE(f32, kBf16UnroundedTolerance) << cfg.describe() << ": worst " << worst_f32;
        if (s.n * s.m > 1) EXPECT_GT(f32, kTolerance) << cfg.describe() << ": bf16 ran as f32";
    }
}

// The untaped forward (inference pipelines), in two chunks, equals the reference over the whole sequence.
TEST(DenseHalide, ChunkedInferenceEqualsWholeReference) {
    ModelConfig cfg = config({7, 3, 6, 5, 3, 3});
    Problem p(cfg);
    nn::DenseQrnn block(cfg);
    for (int64_t l = 0; l < cfg.layers; l++) block.layer_params(l) = convert<float>(p.params[l]);
    nn::State state = block.initial_state(cfg.batch);
    Tensor<float> x = convert<float>(p.x), y1, y2;
    block.forward(leading_rows(x, 0, 4), state, y1, nullptr);
    block.forward(leading_rows(x, 4, 3), state, y2, nullptr);
    StackState<double> s = initial_state<double>(cfg, ref::dense_layer_inputs(cfg));
    Tensor<double> ref_h = ref::dense_forward(cfg, p.params, p.x, s).h;
    EXPECT_LE(compare(y1, leading_rows(ref_h, 0, 4)).rel(), kTolerance);
    EXPECT_LE(compare(y2, leading_rows(ref_h, 4, 3)).rel(), kTolerance);
    for (int64_t l = 0; l < cfg.layers; l++)
        EXPECT_LE(compare(nn::DenseQrnn::layer_state(state, l).history, s.layers[l].history).rel(), kTolerance) << l;
}

// nn::LayerStack(cfg) with model qrnn-dense holds the one dense block (what `qrnn train` builds).
TEST(DenseHalide, LayerStackBuildsTheBlock) {
    ModelConfig cfg = config(kShapes[2]);
    nn::LayerStack stack(cfg);
    ASSERT_EQ(stack.size(), 1u);
    EXPECT_EQ(stack.layer(0).kind(), "qrnn-dense");
    EXPECT_EQ(stack.layer(0).params().size(), 2u * cfg.layers);
    EXPECT_EQ(stack.layer(0).params()[2].value->dim(2), cfg.input + cfg.hidden);  // layer 1 reads n + m channels
}

}  // namespace qrnn::test
