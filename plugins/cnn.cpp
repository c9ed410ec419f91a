// Model plugins "cnn" and "cnn-maxpool": the paper's CNN baseline. The QRNN's masked convolution (same
// window k, zeros before the sequence), one gate, tanh output, no recurrence:
//   y[t][b][h] = tanh(bias[h] + sum_{j<k, c<n} w[0][j][c][h] * x[t-(k-1)+j][b][c])   weights [1][k][n][m]
// "cnn-maxpool" adds max-over-time pooling for classification: out[b][h] = max_t y[t][b][h]. With --layers L,
// layer l convolves layer l-1's y (the pooling follows the last layer).
#include <cmath>
#include <mutex>

#include "core/activations.h"
#include "core/error.h"
#include "core/masked_conv.h"
#include "core/streams.h"
#include "plugins/cnn.h"
#include "plugins/halide_gemms.h"
#include "plugins/model.h"
#include "plugins/training_model.h"
#include "reference/baselines_backward.h"
#include "runtime/seeded_fill.h"
#include "reference/baselines.h"
#include "runtime/kernel.h"
#include "runtime/params.h"
#include "runtime/compiled_layer.h"
#include "schedules/cpu_common.h"
#include "schedules/gemm_core.h"

namespace qrnn {
namespace {
using namespace Halide;

// ---- Algorithm: the QRNN's masked conv (core/masked_conv.h) with one gate, zeros before the sequence -------
struct CnnFuncs : ConvFuncs {
    ImageParam x{Float(32), 3, "x"};              // (c, b, t)
    ImageParam weights{Float(32), 4, "weights"};  // (h, c, j, g), g = 0
    ImageParam bias{Float(32), 2, "bias"};        // (h, g)
    Func activated{"activated"};  // (h, b, t) = tanh(conv)
    Func pooled{"pooled"};        // (h, b) max over t
    RDom time_r;

    // h_tile: the schedule's h tile (the conv reads the weights in place at widths it divides). bf16: the conv's
    // operands rounded where produced (core/masked_conv.h).
    CnnFuncs(int h_tile, Precision p) {
        precision = p;
        Expr n = x.dim(0).extent(), T = x.dim(2).extent();
        define_cnn_input_padded(*this, x);
        define_masked_conv(*this, weights, bias, n, weights.dim(0).extent(), weights.dim(2).extent(), Expr(), h_tile);
        activated(h, b, t) = tanh_activation(conv(h, b, t, 0));
        time_r = RDom(0, T, "time_r");
        pooled(h, b) = maximum(activated(h, b, time_r));
    }
};

// ---- CPU schedule: the QRNN's conv GEMM (schedules/cpu_common.h) -----------------------------------------
// The conv on the GEMM core (schedules/gemm_core.h): the weights packed into panels of the target's tile height,
// register tiles parallel over (column block, panel). For the pooled output the activations stay compute_root and
// the max runs vectorised over h; the JIT allocator keeps freed blocks (runtime/buffer_cache.h).
int cnn_h_tile(const Target &target) { return target.natural_vector_size<float>() * core_tile_for(target).h_vectors; }

void schedule_cpu(CnnFuncs &f, bool pooled, const Target &target) {
    const int vec = target.natural_vector_size<float>();
    schedule_cpu_conv_inputs(f, vec);
    Expr n = f.x.dim(0).extent(), B = f.x.dim(1).extent(), T = f.x.dim(2).extent();
    schedule_cpu_conv_gemm(f, gemm_blocking(target), {n, f.weights.dim(0).extent(), f.weights.dim(2).extent(), T, B});
    if (pooled) {
        f.activated.compute_root().vectorize(f.h, vec, TailStrategy::GuardWithIf).parallel(f.t);
        f.pooled.vectorize(f.h, vec, TailStrategy::GuardWithIf).parallel(f.b);
    } else {
        f.activated.vectorize(f.h, vec, TailStrategy::GuardWithIf).parallel(f.t);
    }
}

struct CompiledCnn {
    Target target = get_jit_target_from_environment();
    CnnFuncs funcs;
    Kernel pipeline;
    CompiledCnn(bool pooled, Precision precision) : funcs(cnn_h_tile(target), precision) {
        schedule_cpu(funcs, pooled, target);
        pipeline = Pipeline(pooled ? funcs.pooled : funcs.activated);
        compile_kernels({&pipeline}, target);
    }
    void run(Tensor<float> &x, Tensor<float> &weights, Tensor<float> &bias, Tensor<float> &y);
};

void CompiledCnn::run(Tensor<float> &x, Tensor<float> &weights, Tensor<float> &bias, Tensor<float> &y) {
    funcs.x.set(view(x));
    funcs.weights.set(view(weights));
    funcs.bias.set(view(bias));
    Buffer<float> out = view(y);
    pipeline.realize(Realization(out));
}

// The pipelines (sequence output, max-pooled output; per precision), each compiled at its first use.
struct CnnPipelines {
    std::mutex mutex;
    // Under `mutex`.
    CompiledCnn &get(bool pooled, Precision precision) {
        std::unique_ptr<CompiledCnn> &p = compiled[pooled][precision == Precision::bf16];
        if (!p) p = std::make_unique<CompiledCnn>(pooled, precision);
        return *p;
    }

private:
    std::unique_ptr<CompiledCnn> compiled[2][2];
};
CnnPipelines &pipelines() {
    // The environment's target is fixed for the process: looked up once, then a reference into the cache.
    static CnnPipelines &p = environment_pipeline<CnnPipelines>([] { return std::make_shared<CnnPipelines>(); });
    return p;
}

class CnnModel : public Model {
public:
    CnnModel(const ModelConfig &cfg, bool pooled)
        : cfg_(cfg), pooled_(pooled), precision_(parse_precision(cfg.precision)), p_(pipelines()), x_(init_input(cfg)) {
        for (int64_t l = 0; l < cfg.layers; l++) layers_.push_back(init_cnn_params(cnn_options(cfg), l));
        y_ = pooled ? Tensor<float>({cfg.batch, cfg.hidden}) : Tensor<float>({cfg.seq, cfg.batch, cfg.hidden});
        if (cfg.layers > 1) between_[0] = between_[1] = Tensor<float>({cfg.seq, cfg.batch, cfg.hidden});
    }
    void forward() override {
        std::lock_guard<std::mutex> lock(p_.mutex);
        Tensor<float> *input = &x_;
        for (int64_t l = 0; l < cfg_.layers; l++) {
            const bool last = l == cfg_.layers - 1;
            Tensor<float> &output = last ? y_ : between_[l % 2];
            p_.get(last && pooled_, precision_).run(*input, layers_[l].weights, layers_[l].bias, output);
            input = &output;
        }
    }
    Comparison verify() override {
        forward();
        Tensor<double> ref = ref::cnn_forward(convert<double>(x_), convert<double>(layers_), precision_);
        return compare(y_, pooled_ ? ref::max_over_time(ref) : ref);
    }
    double flops() const override {  // conv multiply/adds + the bias add (+ the max comparisons)
        double total = 0;
        for (int64_t l = 0; l < cfg_.layers; l++)
            total += static_cast<double>(cfg_.seq) * cfg_.batch * cnn_layer_flops(cfg_.layer_input(l), cfg_.hidden, cfg_.window);
        return total + (pooled_ ? static_cast<double>(cfg_.seq) * cfg_.batch * cfg_.hidden : 0.0);
    }

private:
    ModelConfig cfg_;
    bool pooled_;
    Precision precision_;
    CnnPipelines &p_;
    Tensor<float> x_, y_, between_[2];
    std::vector<LayerParams<float>> layers_;
};

// --pass training --verify: the output and every gradient against ref::cnn_backward (loss = sum(dy * y)), in bf16
// with the operands rounded alike.
Comparison verify_cnn_training(const TrainingStep &s) {
    const Precision precision = parse_precision(s.cfg.precision);
    std::vector<LayerParams<double>> layers;
    for (size_t l = 0; l < s.stack.size(); l++) {
        auto p = s.stack.layer(l).params();  // weights, bias
        layers.push_back({convert<double>(*p[0].value), convert<double>(*p[1].value)});
    }
    const Tensor<double> x = convert<double>(s.x);
    Comparison worst = compare(s.y, ref::cnn_forward(x, layers, precision));
    ref::CnnGrads g = ref::cnn_backward(x, layers, convert<double>(s.dy), precision);
    keep_worst(worst, compare(s.dx, g.dx));
    for (size_t l = 0; l < s.stack.size(); l++) {
        auto p = s.stack.layer(l).params();
        keep_worst(worst, compare(*p[0].grad, g.layers[l].weights));
        keep_worst(worst, compare(*p[1].grad, g.layers[l].bias));
    }
    return worst;
}

// cnn-maxpool's output is [B][m], not a sequence: it does not train as a layer stack.
void register_cnn(const std::string &name, const std::string &description, bool pooled) {
    ModelPlugin p;
    p.name = name, p.description = description, p.options = {"window", "layers", "precision"}, p.targets = {"cpu"};
    if (!pooled) p.options.push_back("precision-training");
    p.validate = require_eval;
    p.build = [pooled](const ModelConfig &cfg, const RunOptions &) -> std::unique_ptr<Model> {
        return std::make_unique<CnnModel>(cfg, pooled);
    };
    if (!pooled) p.layer = make_cnn_layer, p.verifier = verify_cnn_training;
    register_model(std::move(p));
}

}  // namespace

// Layer l: weights [1][k][n_l][m], bias [1][m] uniform in [-1/sqrt(n_l*k), 1/sqrt(n_l*k)], as a QRNN layer's.
LayerParams<float> init_cnn_params(const CnnOptions &opt, int64_t l) {
    const int64_t n = opt.layer_input(l);
    LayerParams<float> p{Tensor<float>({1, opt.window, n, opt.hidden}), Tensor<float>({1, opt.hidden})};
    const double bound = 1.0 / std::sqrt(static_cast<double>(n * opt.window));
    seeded_fill(p.weights, opt.seed, streams::cnn_weights(static_cast<uint32_t>(l)), bound);
    seeded_fill(p.bias, opt.seed, streams::cnn_bias(static_cast<uint32_t>(l)), bound);
    return p;
}

void cnn_layer_forward(Tensor<float> &x, LayerParams<float> &p, Tensor<float> &y, Precision precision) {
    CnnPipelines &pipes = pipelines();
    std::lock_guard<std::mutex> lock(pipes.mutex);
    pipes.get(false, precision).run(x, p.weights, p.bias, y);
}

void define_cnn_input_padded(ConvFuncs &f, const ImageParam &x) {
    Expr n = x.dim(0).extent(), B = x.dim(1).extent(), T = x.dim(2).extent();
    Expr inside = f.t >= 0 && f.t < T;
    Expr value = select(inside, x(clamp(f.c, 0, n - 1), clamp(f.b, 0, B - 1), clamp(f.t, 0, T - 1)), 0.0f);
    f.input_padded(f.c, f.b, f.t) = gemm_operand(value, f.precision);  // rounded where produced
}

double cnn_layer_flops(int64_t n, int64_t m, int64_t k) { return static_cast<double>(m) * (2.0 * n * k + 1.0); }

namespace {
const bool cnn_registered = [] {
    register_cnn("cnn", "CNN baseline: the QRNN's masked conv (window k), tanh, no recurrence", false);
    register_cnn("cnn-maxpool", "CNN baseline with max-over-time pooling: [B][m] output (classification)", true);
    return true;
}();
}  // namespace
}  // namespace qrnn
