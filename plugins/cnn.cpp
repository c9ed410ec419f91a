// Model plugins "cnn" and "cnn-maxpool": the paper's CNN baseline. The QRNN's masked convolution (same
// window k, zeros before the sequence), one gate, tanh output, no recurrence:
//   y[t][b][h] = tanh(bias[h] + sum_{j<k, c<n} w[0][j][c][h] * x[t-(k-1)+j][b][c])   weights [1][k][n][m]
// "cnn-maxpool" adds max-over-time pooling for classification: out[b][h] = max_t y[t][b][h].
#include <cmath>
#include <mutex>

#include "core/activations.h"
#include "core/error.h"
#include "plugins/model.h"
#include "plugins/seeded_fill.h"
#include "reference/baselines.h"
#include "runtime/params.h"

namespace qrnn {
namespace {
using namespace Halide;

// ---- Algorithm -------------------------------------------------------------------------------------------
struct CnnFuncs {
    ImageParam x{Float(32), 3, "x"};              // (c, b, t)
    ImageParam weights{Float(32), 4, "weights"};  // (h, c, j, g), g = 0
    ImageParam bias{Float(32), 2, "bias"};        // (h, g)
    Var c{"c"}, h{"h"}, b{"b"}, t{"t"};
    Func input_padded{"input_padded"};        // (c, b, t), t in [-(k-1), T): zeros before the sequence
    Func weights_clamped{"weights_clamped"};  // (h, c, j): h clamped, so tiles may overrun m
    Func conv{"conv"};                        // (h, b, t) pre-activation
    RDom conv_r;
    Func activated{"activated"};  // (h, b, t) = tanh(conv)
    Func pooled{"pooled"};        // (h, b) max over t
    RDom time_r;

    CnnFuncs() {
        Expr n = x.dim(0).extent(), B = x.dim(1).extent(), T = x.dim(2).extent();
        Expr m = weights.dim(0).extent(), k = weights.dim(2).extent();
        Expr inside = t >= 0 && t < T;
        input_padded(c, b, t) = select(inside, x(clamp(c, 0, n - 1), clamp(b, 0, B - 1), clamp(t, 0, T - 1)), 0.0f);
        weights_clamped(h, c, t) = weights(clamp(h, 0, m - 1), c, t, 0);
        conv_r = RDom(0, n, 0, k, "conv_r");
        conv(h, b, t) = bias(clamp(h, 0, m - 1), 0);
        conv(h, b, t) += weights_clamped(h, conv_r.x, conv_r.y) * input_padded(conv_r.x, b, t - (k - 1) + conv_r.y);
        activated(h, b, t) = tanh_activation(conv(h, b, t));
        time_r = RDom(0, T, "time_r");
        pooled(h, b) = maximum(activated(h, b, time_r));
    }
};

// ---- CPU schedule (as the QRNN's "tuned" conv) ------------------------------------------------------------
// Register-blocked GEMM: 2 vectors of h x 8 steps of t per tile, parallel over t tiles. For the pooled
// output the activations stay compute_root and the max runs vectorised over h.
// Measured 14 ms = 112 GFLOP/s at B=32 T=128 n=m=320 k=2 (2-core AVX-512 EPYC VM).
void schedule_cpu(CnnFuncs &f, bool pooled, const Target &target) {
    const int vec = target.natural_vector_size<float>(), tile_h = 2 * vec, tile_t = 8;
    Var ho("ho"), hi("hi"), to("to"), ti("ti");
    f.input_padded.compute_root().vectorize(f.c, vec, TailStrategy::RoundUp).parallel(f.t);
    f.weights_clamped.compute_root().vectorize(f.h, vec, TailStrategy::RoundUp);
    Func conv_out = f.conv.in();
    conv_out.compute_root()
        .tile(f.h, f.t, ho, to, hi, ti, tile_h, tile_t, TailStrategy::RoundUp)
        .reorder(hi, ti, ho, to, f.b)
        .vectorize(hi, vec)
        .parallel(to);
    f.conv.compute_at(conv_out, ho).vectorize(f.h, vec).unroll(f.h).unroll(f.t);
    f.conv.update().reorder(f.h, f.t, f.conv_r.x, f.conv_r.y).vectorize(f.h, vec).unroll(f.h).unroll(f.t);
    if (pooled) {
        f.activated.compute_root().vectorize(f.h, vec, TailStrategy::GuardWithIf).parallel(f.t);
        f.pooled.vectorize(f.h, vec, TailStrategy::GuardWithIf).parallel(f.b);
    } else {
        f.activated.vectorize(f.h, vec, TailStrategy::GuardWithIf).parallel(f.t);
    }
}

struct CompiledCnn {
    CnnFuncs funcs;
    Pipeline pipeline;
    std::mutex mutex;
    explicit CompiledCnn(bool pooled) {
        Target target = get_jit_target_from_environment();
        schedule_cpu(funcs, pooled, target);
        pipeline = Pipeline(pooled ? funcs.pooled : funcs.activated);
        pipeline.compile_jit(target);
    }
};

CompiledCnn &compiled(bool pooled) {
    static CompiledCnn sequence(false), classify(true);
    return pooled ? classify : sequence;
}

Buffer<float> view(Tensor<float> &t) {
    std::vector<int> dims(t.shape.rbegin(), t.shape.rend());
    return Buffer<float>(t.data.data(), dims);
}

class CnnModel : public Model {
public:
    CnnModel(const ModelConfig &cfg, bool pooled)
        : cfg_(cfg), pooled_(pooled), c_(compiled(pooled)), x_(init_input(cfg)) {
        // Weights [1][k][n][m] and bias [1][m] uniform in [-1/sqrt(n*k), 1/sqrt(n*k)], as a QRNN layer's.
        weights_ = Tensor<float>({1, cfg.window, cfg.input, cfg.hidden});
        bias_ = Tensor<float>({1, cfg.hidden});
        const double bound = 1.0 / std::sqrt(static_cast<double>(cfg.input * cfg.window));
        seeded_fill(weights_, cfg.seed, 0x20010u, bound);
        seeded_fill(bias_, cfg.seed, 0x20011u, bound);
        y_ = pooled ? Tensor<float>({cfg.batch, cfg.hidden}) : Tensor<float>({cfg.seq, cfg.batch, cfg.hidden});
    }
    void forward() override {
        std::lock_guard<std::mutex> lock(c_.mutex);
        c_.funcs.x.set(view(x_));
        c_.funcs.weights.set(view(weights_));
        c_.funcs.bias.set(view(bias_));
        Buffer<float> out = view(y_);
        c_.pipeline.realize(Realization(out));
    }
    Comparison verify() override {
        forward();
        Tensor<double> ref = ref::cnn_forward(convert<double>(x_), {convert<double>(weights_), convert<double>(bias_)});
        return compare(y_, pooled_ ? ref::max_over_time(ref) : ref);
    }
    double flops() const override {  // conv multiply/adds + the bias add (+ the max comparisons)
        return static_cast<double>(cfg_.seq) * cfg_.batch * cfg_.hidden *
               (2.0 * cfg_.input * cfg_.window + 1.0 + (pooled_ ? 1.0 : 0.0));
    }

private:
    ModelConfig cfg_;
    bool pooled_;
    CompiledCnn &c_;
    Tensor<float> x_, weights_, bias_, y_;
};

void register_cnn(const std::string &name, const std::string &description, bool pooled) {
    register_model({name, description, {"window"}, {"cpu"}, nullptr, require_single_layer_eval,
                    [pooled](const ModelConfig &cfg, const RunOptions &) -> std::unique_ptr<Model> {
                        return std::make_unique<CnnModel>(cfg, pooled);
                    }});
}

const bool registered = [] {
    register_cnn("cnn", "CNN baseline: the QRNN's masked conv (window k), tanh, no recurrence", false);
    register_cnn("cnn-maxpool", "CNN baseline with max-over-time pooling: [B][m] output (classification)", true);
    return true;
}();
}  // namespace
}  // namespace qrnn
