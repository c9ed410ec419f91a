#include "bench/bench_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/chunked_scan.h"
#include "core/error.h"
#include "core/hash_rng.h"
#include "runtime/jit_compile.h"
#include "schedules/cpu_backward.h"
#include "schedules/cpu_common.h"
#include "schedules/gemm_core.h"
#include "schedules/training_schedule.h"
#include "bench/bench_clock.h"
#include "bench/bench_operands.h"
#include "bench/sgemm_references.h"

namespace qrnn::bench {
using namespace Halide;

namespace {
int round_up(int64_t v, int f) { return static_cast<int>((v + f - 1) / f * f); }
}  // namespace

std::vector<Timing> time_interleaved(const std::vector<std::function<void()>> &fs, int warmup, int repeats, bool warm_calls) {
    for (int i = 0; i < warmup; i++)
        for (auto &f : fs) f();
    std::vector<Timing> timings(fs.size());
    for (int i = 0; i < repeats; i++)
        for (size_t j = 0; j < fs.size(); j++) {
            if (warm_calls) fs[j]();  // untimed
            CallTimer timer;
            fs[j]();
            timings[j].ms.push_back(timer.elapsed_ms());
        }
    return timings;
}

RoundRatios round_ratios(const Timing &ours, const Timing &reference) {
    std::vector<double> r;
    for (size_t i = 0; i < std::min(ours.ms.size(), reference.ms.size()); i++) r.push_back(reference.ms[i] / ours.ms[i]);
    if (r.empty()) return {};
    std::sort(r.begin(), r.end());
    auto at = [&](double q) {  // linear interpolation between order statistics
        double x = q * (r.size() - 1);
        size_t i = static_cast<size_t>(x);
        return i + 1 < r.size() ? r[i] + (x - i) * (r[i + 1] - r[i]) : r[i];
    };
    return {at(0.5), at(0.25), at(0.75)};
}

std::pair<Timing, Timing> time_side_by_side(const std::function<void()> &a, const std::function<void()> &b, int warmup,
                                            int repeats) {
    auto t = time_interleaved({a, b}, warmup, repeats);
    return {t[0], t[1]};
}

// A layer's forward inputs (x, history, weights, bias, c0), seeded, bound to `in`.
struct LayerData {
    Buffer<float> x, history, weights, bias, c0;
    LayerData(const LayerShape &s, int G, LayerInputs &in)
        : x(I(s.n), I(s.B), I(s.T)), history(I(s.n), I(s.B), I(std::max<int64_t>(s.k - 1, 1))),
          weights(I(s.m), I(s.n), I(s.k), G), bias(I(s.m), G), c0(I(s.m), I(s.B)) {
        fill_buffer(x, 7, 1, 1.0f);
        fill_buffer(history, 7, 2, 1.0f);
        fill_buffer(weights, 7, 3, 0.05f);
        fill_buffer(bias, 7, 4, 0.05f);
        in.x.set(x);
        in.history.set(history);
        in.weights.set(weights);
        in.bias.set(bias);
        in.c0.set(c0);
    }
    // input_padded(c, b, t) without dropout: x, or history for t < 0.
    float input(int64_t c, int64_t b, int64_t t, int64_t k) const {
        return t >= 0 ? x(I(c), I(b), I(t)) : history(I(c), I(b), I(t + k - 1));
    }
};

double max_rel(double diff, double ref) { return ref > 0 ? diff / ref : diff; }

// A kernel's pipelines must run as compiled for the bench's target, once: a Halide call given no target (as
// infer_input_bounds' default) recompiles for the environment's, and AVX-512 code was once timed as the AVX2 path.
// Each pipeline counts its lowerings (one per JIT compile); a kernel checks the count when it is built.
class LoweringCounter : public Halide::Internal::IRMutator {
public:
    explicit LoweringCounter(std::shared_ptr<int> count) : count_(std::move(count)) {}
    using IRMutator::mutate;
    Halide::Internal::Stmt mutate(const Halide::Internal::Stmt &s) override { return ++*count_, s; }

private:
    std::shared_ptr<int> count_;
};

// JIT-compiles p for target; returns its count of lowerings.
std::shared_ptr<int> compile_counted(Pipeline &p, const Target &target) {
    auto count = std::make_shared<int>(0);
    p.add_custom_lowering_pass(new LoweringCounter(count));
    p.compile_jit(target);
    return count;
}

void require_compiled_once(const std::vector<std::shared_ptr<int>> &counts, const char *kernel, const Target &target) {
    for (const auto &count : counts)
        if (*count != 1)
            fail("the ", kernel, " kernel was compiled ", *count, " times (expected once, for ", target.to_string(), ")");
}

// What the GEMM kernels' states start with.
struct KernelBase {
    LayerShape shape;
    Target target;
    int G = 0;
    const PoolingVariant &init(const PoolingVariant &pooling, const LayerShape &s, const Target &t) {
        shape = s, target = t;
        G = pooling.gate_count();
        return pooling;
    }
};

struct ConvGemm::State : KernelBase {
    int tile_t = 8, tile_h = 32;
    LayerInputs in;
    Pipeline pipeline;
    std::unique_ptr<LayerData> data;
    Buffer<float> out;                  // (h, b, t, g), rounded up to the tiles
    std::vector<float> a, bmat, c;      // BLAS: c[T*B][G*m] = a[T*B][n*k] * bmat[n*k][G*m]
    std::vector<uint16_t> a16, bmat16;  // bf16: a and bmat rounded to bfloat16 (bit patterns)
};

namespace {
std::vector<uint16_t> bf16_bits(const std::vector<float> &v) {
    std::vector<uint16_t> out(v.size());
    for (size_t i = 0; i < v.size(); i++) {
        const float r = round_to_bf16(v[i]);
        uint32_t bits;
        std::memcpy(&bits, &r, 4);
        out[i] = static_cast<uint16_t>(bits >> 16);
    }
    return out;
}
}  // namespace

ConvGemm::ConvGemm(const PoolingVariant &pooling, const LayerShape &shape, const Target &target, Precision precision)
    : s_(std::make_shared<State>()) {
    State &s = *s_;
    const PoolingVariant &v = s.init(pooling, shape, target);
    s.in.precision = precision;
    const int vec = target.natural_vector_size<float>();
    const Knobs knobs = default_knobs(find_layer_schedule("tuned"), target);
    s.tile_h = gemm_h_tile(target, knobs);
    s.tile_t = knobs.at("tile_t");
    LayerFuncs L = define_qrnn_layer(s.in, v, s.tile_h);  // as the tuned schedule builds it
    schedule_cpu_inputs(L, s.in, vec);
    Func conv_out = schedule_cpu_conv_gemm(L, gemm_blocking(target, {knobs.at("tile_h_vectors"), s.tile_t}),
                                           {L.n, L.m, L.k, L.T, L.B});
    s.pipeline = Pipeline(conv_out);
    use_cpu_jit_handlers(s.pipeline);
    auto compiled = compile_counted(s.pipeline, target);

    const int64_t T = shape.T, B = shape.B, n = shape.n, m = shape.m, k = shape.k;
    s.data = std::make_unique<LayerData>(shape, s.G, s.in);
    const LayerData &d = *s.data;
    s.out = Buffer<float>(round_up(m, s.tile_h), I(B), round_up(T, s.tile_t), s.G);

    // BLAS operands: row (t, b) of a is the window [x[t-k+1..t]][b][:]; column (g, h) of bmat the weights.
    const int64_t N = T * B, K = n * k, M = s.G * m;
    s.a.assign(N * K, 0.0f);
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < B; b++)
            for (int64_t j = 0; j < k; j++)
                for (int64_t c = 0; c < n; c++) s.a[(t * B + b) * K + j * n + c] = d.input(c, b, t - (k - 1) + j, k);
    s.bmat.assign(K * M, 0.0f);
    for (int64_t j = 0; j < k; j++)
        for (int64_t c = 0; c < n; c++)
            for (int g = 0; g < s.G; g++)
                for (int64_t h = 0; h < m; h++) s.bmat[(j * n + c) * M + g * m + h] = d.weights(I(h), I(c), I(j), g);
    s.c.assign(N * M, 0.0f);
    if (precision == Precision::bf16) s.a16 = bf16_bits(s.a), s.bmat16 = bf16_bits(s.bmat);
    require_compiled_once({compiled}, "conv GEMM", target);
}

void ConvGemm::run_halide() { s_->pipeline.realize(s_->out); }

void ConvGemm::run_reference(size_t i) {
    State &s = *s_;
    if (!s.a16.empty())
        return dnnl_bf16_gemm(I(s.shape.T * s.shape.B), I(s.G * s.shape.m), I(s.shape.n * s.shape.k), s.a16.data(),
                              s.bmat16.data(), s.c.data());
    sgemm_references(s.target).at(i).run(I(s.shape.T * s.shape.B), I(s.G * s.shape.m), I(s.shape.n * s.shape.k), s.a.data(),
                                         s.bmat.data(), s.c.data());
}

double ConvGemm::flops() const { return 2.0 * s_->shape.T * s_->shape.B * s_->G * s_->shape.m * s_->shape.n * s_->shape.k; }

double ConvGemm::max_rel_diff(size_t i) {
    State &s = *s_;
    run_halide();
    std::fill(s.c.begin(), s.c.end(), 0.0f);
    run_reference(i);
    double diff = 0, ref = 0;
    const int64_t M = s.G * s.shape.m;
    for (int64_t t = 0; t < s.shape.T; t++)
        for (int64_t b = 0; b < s.shape.B; b++)
            for (int g = 0; g < s.G; g++)
                for (int64_t h = 0; h < s.shape.m; h++) {
                    double blas = s.c[(t * s.shape.B + b) * M + g * s.shape.m + h] + s.data->bias(I(h), g);
                    diff = std::max(diff, std::abs(s.out(I(h), I(b), I(t), g) - blas));
                    ref = std::max(ref, std::abs(blas));
                }
    return max_rel(diff, ref);
}

struct PoolingScan::State {
    LayerShape shape;
    int G = 0;
    ImageParam gates{Float(32), 4, "gates"};
    ImageParam c0{Float(32), 2, "c0"};
    Pipeline pipeline;
    Buffer<float> gates_buf, c0_buf, c_out, h_out;
};

PoolingScan::PoolingScan(const PoolingVariant &pooling, const LayerShape &shape, const Target &target, bool chunked, int chunk)
    : s_(std::make_shared<State>()) {
    State &s = *s_;
    s.shape = shape;
    const PoolingVariant &v = pooling;
    s.G = v.gate_count();
    const int vec = target.natural_vector_size<float>();
    ScanSource src;
    src.variant = &v;
    src.T = s.gates.dim(2).extent();
    Var h = src.h, b = src.b, t = src.t;
    src.gates = Func(s.gates);
    src.c0 = Func(s.c0);
    if (!chunked) {
        // As in "tuned": time serial inside each block of b (one per core) or (chains vectors of h) strip.
        SingleScan S = single_scan(src);
        RVar r = S.r.x;
        schedule_scan_strips(S.cell.update(0), h, s.gates.dim(0).extent(), vec, default_knobs(find_layer_schedule("tuned"), target).at("chains"),
                             [&](Stage &st, const Var &so, const Var &su, const Var &sv) {
                                 schedule_scan_rows(st, b, s.gates.dim(1).extent(), s.gates.dim(0).extent(), r, so, su, sv);
                             });
        s.pipeline = Pipeline(S.cell);
    } else {
        ChunkedScan S = chunked_scan(src, chunk);
        const Knobs knobs = default_knobs(find_layer_schedule("chunked-scan"), target);
        schedule_cpu_chunked_scan(S, h, b, t, s.gates.dim(0).extent(), vec, knobs.at("chains"), knobs.at("interleave"));
        s.pipeline = Pipeline(S.cell);
    }
    use_cpu_jit_handlers(s.pipeline);
    auto compiled = compile_counted(s.pipeline, target);
    s.gates_buf = Buffer<float>(I(shape.m), I(shape.B), I(shape.T), s.G);
    s.c0_buf = Buffer<float>(I(shape.m), I(shape.B));
    fill_buffer(s.gates_buf, 7, 5, 1.0f);
    s.gates_buf.for_each_value([](float &v) { v = 0.5f + 0.495f * v; });  // activated gates: in (0, 1)
    fill_buffer(s.c0_buf, 7, 6, 0.5f);
    s.c_out = Buffer<float>(I(shape.m), I(shape.B), I(shape.T));
    s.h_out = Buffer<float>(I(shape.m), I(shape.B), I(shape.T));
    require_compiled_once({compiled}, "pooling scan", target);
}

void PoolingScan::run() {
    State &s = *s_;
    s.gates.set(s.gates_buf);
    s.c0.set(s.c0_buf);
    s.pipeline.realize(Realization({s.c_out, s.h_out}));
}

double PoolingScan::bytes() const { return 4.0 * (s_->G + 2) * s_->shape.T * s_->shape.B * s_->shape.m; }

double PoolingScan::max_rel_diff(PoolingScan &other) {
    run();
    other.run();
    double diff = 0, ref = 0;
    s_->h_out.for_each_element([&](int x, int y, int z) {
        diff = std::max(diff, static_cast<double>(std::abs(s_->h_out(x, y, z) - other.s_->h_out(x, y, z))));
        ref = std::max(ref, static_cast<double>(std::abs(other.s_->h_out(x, y, z))));
    });
    return ref > 0 ? diff / ref : diff;
}

struct BackwardGemms::State : KernelBase {
    BackwardInputs in;
    ImageParam dpre_in{Float(32), 4, "dpre_in"};
    Pipeline dweights, dinput;
    std::unique_ptr<LayerData> data;
    Buffer<float> dpre, dw_out, dx_out;    // dpre: (h, b, t, g) over the region the tiles read, 0 outside the layer
    std::vector<float> w_a, w_b, w_c;      // dW: w_c[k*n][G*m] = w_a[k*n][T*B] * w_b[T*B][G*m]
    std::vector<float> x_a, x_b, x_c;      // dX: x_c[T*B][n] = x_a[T*B][k*G*m] * x_b[k*G*m][n]
};

BackwardGemms::BackwardGemms(const PoolingVariant &pooling, const LayerShape &shape, const Target &target)
    : s_(std::make_shared<State>()) {
    State &s = *s_;
    const PoolingVariant &v = s.init(pooling, shape, target);
    BackwardFuncs D = declare_qrnn_backward(s.in, v);
    Func dpre("dpre_given");
    dpre(D.h, D.b, D.t, D.g) = s.dpre_in(D.h, D.b, D.t, D.g);
    const Knobs knobs = merge_knobs(find_training_schedule("tuned"), {}, target);
    define_backward_gemms(D, s.in, dpre, cpu_backward_panels(target, knobs));
    schedule_cpu_backward_gemms(D, s.in, target, knobs);
    s.dweights = Pipeline(D.dweights);
    s.dinput = Pipeline(D.dx);
    std::vector<std::shared_ptr<int>> compiled;
    for (Pipeline *p : {&s.dweights, &s.dinput}) {
        use_cpu_jit_handlers(*p);
        compiled.push_back(compile_counted(*p, target));
    }
    const int64_t T = shape.T, B = shape.B, n = shape.n, m = shape.m, k = shape.k, G = s.G;
    s.data = std::make_unique<LayerData>(shape, s.G, s.in.fwd);
    s.dw_out = Buffer<float>(I(m), I(n), I(k), s.G);
    s.dx_out = Buffer<float>(I(n), I(B), I(T));
    // The dpre region both pipelines read (their tiles overrun the layer): the union of the inferred bounds.
    std::vector<int> lo(4, INT32_MAX), hi(4, INT32_MIN);
    for (auto [p, out] : {std::pair<Pipeline *, Buffer<float> *>{&s.dweights, &s.dw_out}, {&s.dinput, &s.dx_out}}) {
        s.dpre_in.reset();
        p->infer_input_bounds(*out, target);  // (its default target, the environment's, would recompile it)
        Buffer<float> b = s.dpre_in.get();
        for (int d = 0; d < 4; d++) lo[d] = std::min(lo[d], b.dim(d).min()), hi[d] = std::max(hi[d], b.dim(d).max());
    }
    s.dpre = Buffer<float>(hi[0] - lo[0] + 1, hi[1] - lo[1] + 1, hi[2] - lo[2] + 1, hi[3] - lo[3] + 1);
    s.dpre.set_min(lo);
    s.dpre.fill(0.0f);
    Runtime::Buffer<float> inside = s.dpre.get()->cropped({{0, I(m)}, {0, I(B)}, {0, I(T)}, {0, s.G}});
    fill_buffer(inside, 7, 7, 1.0f);
    s.dpre_in.set(s.dpre);

    auto dpre_at = [&](int64_t h, int64_t b, int64_t t, int64_t g) {
        return t >= 0 && t < T ? s.dpre(I(h), I(b), I(t), I(g)) : 0.0f;
    };
    const int64_t rows = T * B, N = G * m, K = k * G * m;
    s.w_a.resize(k * n * rows), s.w_b.resize(rows * N), s.w_c.resize(k * n * N);
    s.x_a.resize(rows * K), s.x_b.resize(K * n), s.x_c.resize(rows * n);
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < B; b++) {
            const int64_t row = t * B + b;
            for (int64_t j = 0; j < k; j++)
                for (int64_t c = 0; c < n; c++) s.w_a[(j * n + c) * rows + row] = s.data->input(c, b, t - (k - 1) + j, k);
            for (int64_t g = 0; g < G; g++)
                for (int64_t h = 0; h < m; h++) {
                    s.w_b[row * N + g * m + h] = dpre_at(h, b, t, g);
                    for (int64_t j = 0; j < k; j++) s.x_a[row * K + (j * G + g) * m + h] = dpre_at(h, b, t + (k - 1) - j, g);
                }
        }
    for (int64_t j = 0; j < k; j++)
        for (int64_t g = 0; g < G; g++)
            for (int64_t h = 0; h < m; h++)
                for (int64_t c = 0; c < n; c++) s.x_b[((j * G + g) * m + h) * n + c] = s.data->weights(I(h), I(c), I(j), I(g));
    require_compiled_once(compiled, "backward GEMMs", target);
}

void BackwardGemms::run_dweights() { s_->dweights.realize(s_->dw_out); }
void BackwardGemms::run_dinput() { s_->dinput.realize(s_->dx_out); }

void BackwardGemms::run_reference_dweights(size_t i) {
    State &s = *s_;
    const LayerShape &x = s.shape;
    sgemm_references(s.target).at(i).run(I(x.k * x.n), I(s.G * x.m), I(x.T * x.B), s.w_a.data(), s.w_b.data(), s.w_c.data());
}

void BackwardGemms::run_reference_dinput(size_t i) {
    State &s = *s_;
    const LayerShape &x = s.shape;
    sgemm_references(s.target).at(i).run(I(x.T * x.B), I(x.n), I(x.k * s.G * x.m), s.x_a.data(), s.x_b.data(), s.x_c.data());
}

double BackwardGemms::flops() const {
    const LayerShape &x = s_->shape;
    return 2.0 * x.T * x.B * s_->G * x.m * x.n * x.k;
}

std::pair<double, double> BackwardGemms::max_rel_diff(size_t i) {
    State &s = *s_;
    const LayerShape &x = s.shape;
    run_dweights(), run_dinput(), run_reference_dweights(i), run_reference_dinput(i);
    double dw = 0, dw_ref = 0, dx = 0, dx_ref = 0;
    for (int64_t j = 0; j < x.k; j++)
        for (int64_t c = 0; c < x.n; c++)
            for (int g = 0; g < s.G; g++)
                for (int64_t h = 0; h < x.m; h++) {
                    double r = s.w_c[(j * x.n + c) * s.G * x.m + g * x.m + h];
                    dw = std::max(dw, std::abs(s.dw_out(I(h), I(c), I(j), g) - r)), dw_ref = std::max(dw_ref, std::abs(r));
                }
    for (int64_t t = 0; t < x.T; t++)
        for (int64_t b = 0; b < x.B; b++)
            for (int64_t c = 0; c < x.n; c++) {
                double r = s.x_c[(t * x.B + b) * x.n + c];
                dx = std::max(dx, std::abs(s.dx_out(I(c), I(b), I(t)) - r)), dx_ref = std::max(dx_ref, std::abs(r));
            }
    return {max_rel(dw, dw_ref), max_rel(dx, dx_ref)};
}

struct BackwardScan::State {
    LayerShape shape;
    BackwardInputs in;
    Pipeline pipeline;
    std::unique_ptr<LayerData> data;
    Buffer<float> gates, cell, dh, dc_final, dcell;
    double planes = 0;  // float planes of T*B*m moved
};

BackwardScan::BackwardScan(const PoolingVariant &pooling, const LayerShape &shape, const Target &target)
    : s_(std::make_shared<State>()) {
    State &s = *s_;
    s.shape = shape;
    const PoolingVariant &v = pooling;
    BackwardFuncs D = define_qrnn_backward(s.in, v);
    schedule_cpu_backward_scan(D, s.in, target, merge_knobs(find_training_schedule("tuned"), {}, target));
    s.pipeline = Pipeline(D.dcell);
    use_cpu_jit_handlers(s.pipeline);
    auto compiled = compile_counted(s.pipeline, target);
    s.data = std::make_unique<LayerData>(shape, v.gate_count(), s.in.fwd);
    s.dcell = Buffer<float>(I(shape.m), I(shape.B), I(shape.T));
    s.pipeline.infer_input_bounds(s.dcell, target);  // which planes dcell reads: the undefined inputs it needs get sized
    auto planes_of = [](const ImageParam &p, int dims) {
        Buffer<> b = p.get();
        return b.defined() ? (dims == 4 ? b.dim(3).extent() : 1) : 0;
    };
    s.planes = planes_of(s.in.gates, 4) + planes_of(s.in.cell, 3) + planes_of(s.in.dh, 3) + 1;
    s.gates = Buffer<float>(I(shape.m), I(shape.B), I(shape.T), v.gate_count());
    s.cell = Buffer<float>(I(shape.m), I(shape.B), I(shape.T));
    s.dh = Buffer<float>(I(shape.m), I(shape.B), I(shape.T));
    s.dc_final = Buffer<float>(I(shape.m), I(shape.B));
    fill_buffer(s.gates, 7, 8, 1.0f);
    s.gates.for_each_value([](float &x) { x = 0.5f + 0.495f * x; });  // activated gates: in (0, 1)
    fill_buffer(s.cell, 7, 9, 1.0f);
    fill_buffer(s.dh, 7, 10, 1.0f);
    fill_buffer(s.dc_final, 7, 11, 1.0f);
    s.in.gates.set(s.gates);
    s.in.cell.set(s.cell);
    s.in.dh.set(s.dh);
    s.in.dc_final.set(s.dc_final);
    require_compiled_once({compiled}, "backward scan", target);
}

void BackwardScan::run() { s_->pipeline.realize(s_->dcell); }
double BackwardScan::bytes() const { return 4.0 * s_->planes * s_->shape.T * s_->shape.B * s_->shape.m; }

struct Triad::State {
    int64_t n;
    Buffer<float> a, b, c;
    Pipeline pipeline;
};

Triad::Triad(int64_t elements, const Target &target) : s_(std::make_shared<State>()) {
    State &s = *s_;
    s.n = elements;
    s.b = Buffer<float>(I(elements));
    s.c = Buffer<float>(I(elements));
    s.a = Buffer<float>(I(elements));
    s.b.fill(1.0f);
    s.c.fill(2.0f);
    Var x("x"), xo("xo"), xi("xi");
    Func triad("triad");
    triad(x) = s.b(x) + 3.0f * s.c(x);
    triad.split(x, xo, xi, 1 << 16, TailStrategy::GuardWithIf).vectorize(xi, target.natural_vector_size<float>()).parallel(xo);
    s.pipeline = Pipeline(triad);
    auto compiled = compile_counted(s.pipeline, target);
    require_compiled_once({compiled}, "triad", target);
}

void Triad::run() { s_->pipeline.realize(s_->a); }
double Triad::bytes() const { return 3.0 * 4.0 * s_->n; }

}  // namespace qrnn::bench
