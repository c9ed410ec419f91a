#include "bench/bench_arch.h"

#include <cmath>
#include <deque>

#include "core/error.h"
#include "nn/dense_stack.h"
#include "nn/qrnn_layer.h"
#include "nn/seq_layer.h"
#include "runtime/seeded_fill.h"

namespace qrnn::bench {
namespace {
constexpr int64_t kDenseLayers = 3;
constexpr uint32_t kSeed = 7;

ModelConfig config(const std::string &model, const std::string &pooling, const LayerShape &s, int64_t n, int64_t m,
                   const std::string &target, int64_t layers = 1) {
    ModelConfig cfg;
    cfg.model = model, cfg.pooling = pooling, cfg.target = target;
    cfg.seq = s.T, cfg.batch = s.B, cfg.input = n, cfg.hidden = m, cfg.window = s.k, cfg.layers = layers;
    return cfg;
}

std::unique_ptr<nn::Layer> plain_layer(const std::string &pooling, const LayerShape &s, int64_t n, int64_t m,
                                       const std::string &target, Precision precision = Precision::f32) {
    ModelConfig cfg = config("qrnn", pooling, s, n, m, target);
    cfg.precision = precision_name(precision);
    return std::make_unique<nn::QrnnLayer>(cfg, 0);
}

std::unique_ptr<nn::Layer> seq_layer(const std::string &model, const std::string &pooling, const LayerShape &s,
                                     const std::string &target) {
    return std::make_unique<nn::SeqQrnnLayer>(config(model, pooling, s, s.n, s.m, target), 0, nn::seq_model_options(model));
}

// to's parameters := from's parameters (params() i of from to i of to; same shapes).
void copy_params(const std::vector<nn::Param> &from, const std::vector<nn::Param> &to) {
    for (size_t i = 0; i < to.size(); i++) {
        if (from.at(i).value->shape != to[i].value->shape) fail("bench arch: parameter ", to[i].name, " shapes differ");
        *to[i].value = *from[i].value;
    }
}

// [T][B][a + b]: a's channels, then b's.
Tensor<float> concat_channels(const Tensor<float> &a, const Tensor<float> &b) {
    const int64_t rows = a.dim(0) * a.dim(1), wa = a.dim(2), wb = b.dim(2);
    Tensor<float> out({a.dim(0), a.dim(1), wa + wb});
    for (int64_t r = 0; r < rows; r++) {
        std::copy_n(&a.data[r * wa], wa, &out.data[r * (wa + wb)]);
        std::copy_n(&b.data[r * wb], wb, &out.data[r * (wa + wb) + wa]);
    }
    return out;
}

void check_same(const Tensor<float> &ours, const Tensor<float> &plain, const std::string &what, const LayerShape &s) {
    double worst = 0, scale = 0;
    for (size_t i = 0; i < plain.size(); i++) {
        worst = std::max(worst, std::abs(static_cast<double>(ours.data.at(i)) - plain.data[i]));
        scale = std::max(scale, std::abs(static_cast<double>(plain.data[i])));
    }
    if (ours.shape != plain.shape || !(worst <= 1e-4 * scale))
        fail("bench arch: ", what, " and the plain layer disagree at T=", s.T, " B=", s.B, " n=", s.n, " m=", s.m,
             " (max rel ", worst / scale, ")");
}

struct Owner {
    std::deque<LayerDriver> drivers;  // stable addresses for the runs
};
}  // namespace

LayerDriver::LayerDriver(std::unique_ptr<nn::Layer> l, Tensor<float> input) : layer(std::move(l)), x(std::move(input)) {
    state = layer->initial_state(x.dim(1));
    tape = layer->make_tape();
    dy = Tensor<float>({x.dim(0), x.dim(1), layer->output_size()});
    seeded_fill(dy, kSeed, 2, 1.0);
    forward();
}

void LayerDriver::forward() {
    state.time = 0;
    layer->forward(x, state, y, nullptr);
}

void LayerDriver::step() {
    state.time = 0;
    layer->forward(x, state, y, tape.get());
    layer->backward(*tape, dy, nullptr, &dx, nullptr);
}

std::unique_ptr<LayerDriver> qrnn_layer_driver(const std::string &pooling, const LayerShape &s, const std::string &target,
                                               Precision precision) {
    Tensor<float> x({s.T, s.B, s.n});
    seeded_fill(x, kSeed, 1, 1.0);
    return std::make_unique<LayerDriver>(plain_layer(pooling, s, s.n, s.m, target, precision), std::move(x));
}

ArchBench arch_bench(const std::string &pooling, const LayerShape &s, const std::string &target) {
    auto owner = std::make_shared<Owner>();
    ArchBench bench;
    bench.owner = owner;
    auto &d = owner->drivers;
    auto add_runs = [&](std::function<void()> forward, std::function<void()> step) {
        bench.runs.push_back(std::move(forward));
        bench.runs.push_back(std::move(step));
        return bench.runs.size() - 2;
    };
    auto add_driver = [&](std::unique_ptr<nn::Layer> layer, Tensor<float> x) -> LayerDriver & {
        return d.emplace_back(std::move(layer), std::move(x));
    };
    auto single = [&](LayerDriver &one) { return add_runs([&one] { one.forward(); }, [&one] { one.step(); }); };
    Tensor<float> x({s.T, s.B, s.n});
    seeded_fill(x, kSeed, 1, 1.0);

    // Dense: the plain layers get the concatenations of x and the earlier plain outputs (same parameters).
    auto dense_layer = std::make_unique<nn::DenseQrnn>(config("qrnn-dense", pooling, s, s.n, s.m, target, kDenseLayers));
    const std::vector<nn::Param> dense_params = dense_layer->params();
    std::vector<LayerDriver *> plain_stack;
    Tensor<float> input = x;
    for (int64_t l = 0; l < kDenseLayers; l++) {
        auto layer = plain_layer(pooling, s, s.n + l * s.m, s.m, target);
        copy_params({dense_params[2 * l], dense_params[2 * l + 1]}, layer->params());
        plain_stack.push_back(&add_driver(std::move(layer), input));
        if (l + 1 < kDenseLayers) input = concat_channels(input, plain_stack.back()->y);
    }
    LayerDriver &dense = add_driver(std::move(dense_layer), x);
    check_same(dense.y, plain_stack.back()->y, "the dense stack", s);
    const size_t plain_dense = add_runs([plain_stack] { for (LayerDriver *p : plain_stack) p->forward(); },
                                        [plain_stack] { for (LayerDriver *p : plain_stack) p->step(); });
    const size_t dense_runs = single(dense);

    // Bidirectional: against the plain layer of 2m units.
    const size_t plain_2m = single(add_driver(plain_layer(pooling, s, s.n, 2 * s.m, target), x));
    const size_t bidir = single(add_driver(seq_layer("qrnn-bidir", pooling, s, target), x));
    const size_t bidir_sum = single(add_driver(seq_layer("qrnn-bidir-sum", pooling, s, target), x));

    // Variable length: every length T (same parameters as the plain layer: same output) and seeded random lengths.
    LayerDriver &plain = add_driver(plain_layer(pooling, s, s.n, s.m, target), x);
    const size_t plain_m = single(plain);
    auto varlen_layer = [&](bool all_t) {
        auto layer = seq_layer("qrnn-varlen", pooling, s, target);
        if (all_t) static_cast<nn::SeqQrnnLayer &>(*layer).set_lengths({});  // else its seeded lengths in [1, T]
        copy_params(plain.layer->params(), layer->params());
        return layer;
    };
    LayerDriver &varlen = add_driver(varlen_layer(true), x);
    check_same(varlen.y, plain.y, "the variable-length layer (all lengths T)", s);
    const size_t varlen_t = single(varlen);
    const size_t varlen_random = single(add_driver(varlen_layer(false), x));

    const std::string of_2m = "plain layer of 2m units";
    bench.comparisons = {
        {"dense stack (3 layers, pieces in place)", "plain layers n, n+m, n+2m (contiguous inputs)", plain_dense,
         plain_dense + 1, dense_runs, dense_runs + 1},
        {"bidirectional concat", of_2m, plain_2m, plain_2m + 1, bidir, bidir + 1},
        {"bidirectional sum", of_2m, plain_2m, plain_2m + 1, bidir_sum, bidir_sum + 1},
        {"variable length (all T)", "plain layer", plain_m, plain_m + 1, varlen_t, varlen_t + 1},
        {"variable length (random in [1,T], less work: information)", "plain layer", plain_m, plain_m + 1,
         varlen_random, varlen_random + 1}};
    return bench;
}

}  // namespace qrnn::bench
