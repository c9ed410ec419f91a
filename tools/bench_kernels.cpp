#include "tools/bench_kernels.h"

#include <chrono>
#include <cmath>
#include <cstdlib>

#include "core/chunked_scan.h"
#include "core/hash_rng.h"
#include "runtime/buffer_cache.h"
#include "schedules/cpu_common.h"
#include "tools/sgemm_references.h"

namespace qrnn::bench {
using namespace Halide;

namespace {
void fill(Buffer<float> &b, uint32_t stream, float bound) {
    uint32_t key = stream_key(7, stream), i = 0;
    b.for_each_value([&](float &v) { v = static_cast<float>(hash_uniform(hash_at<uint32_t>(key, 0, 0, i++), -bound, bound)); });
}
int I(int64_t v) { return static_cast<int>(v); }
int round_up(int64_t v, int f) { return static_cast<int>((v + f - 1) / f * f); }
}  // namespace

std::vector<Timing> time_interleaved(const std::vector<std::function<void()>> &fs, int warmup, int repeats) {
    for (int i = 0; i < warmup; i++)
        for (auto &f : fs) f();
    std::vector<Timing> timings(fs.size());
    for (int i = 0; i < repeats; i++)
        for (size_t j = 0; j < fs.size(); j++) {
            auto start = std::chrono::steady_clock::now();
            fs[j]();
            timings[j].ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
        }
    return timings;
}

std::pair<Timing, Timing> time_side_by_side(const std::function<void()> &a, const std::function<void()> &b, int warmup,
                                            int repeats) {
    auto t = time_interleaved({a, b}, warmup, repeats);
    return {t[0], t[1]};
}

struct ConvGemm::State {
    LayerShape shape;
    Target target;
    int G = 0, tile_t = 8, tile_h = 32;
    LayerInputs in;
    Pipeline pipeline;
    Buffer<float> x, history, weights, bias, c0, out;  // out: (h, b, t, g), rounded up to the tiles
    std::vector<float> a, bmat, c;                     // BLAS: c[T*B][G*m] = a[T*B][n*k] * bmat[n*k][G*m]
};

ConvGemm::ConvGemm(const std::string &pooling, const LayerShape &shape, const Target &target)
    : s_(std::make_shared<State>()) {
    State &s = *s_;
    s.shape = shape;
    s.target = target;
    const PoolingVariant &v = find_pooling(pooling);
    s.G = v.gate_count();
    const int vec = target.natural_vector_size<float>();
    const Knobs knobs = default_knobs(find_layer_schedule("tuned"), target);
    s.tile_h = vec * knobs.at("tile_h_vectors");
    s.tile_t = knobs.at("tile_t");
    LayerFuncs L = define_qrnn_layer(s.in, v);
    schedule_cpu_inputs(L, s.in, vec);
    Func conv_out = schedule_cpu_conv_gemm(L, vec, knobs.at("tile_h_vectors"), s.tile_t, knobs.at("b_inner"));
    s.pipeline = Pipeline(conv_out);
    use_buffer_cache(s.pipeline);
    s.pipeline.compile_jit(target);

    const int64_t T = shape.T, B = shape.B, n = shape.n, m = shape.m, k = shape.k;
    s.x = Buffer<float>(I(n), I(B), I(T));
    s.history = Buffer<float>(I(n), I(B), I(std::max<int64_t>(k - 1, 1)));
    s.weights = Buffer<float>(I(m), I(n), I(k), s.G);
    s.bias = Buffer<float>(I(m), s.G);
    s.c0 = Buffer<float>(I(m), I(B));
    fill(s.x, 1, 1.0f);
    fill(s.history, 2, 1.0f);
    fill(s.weights, 3, 0.05f);
    fill(s.bias, 4, 0.05f);
    s.out = Buffer<float>(round_up(m, s.tile_h), I(B), round_up(T, s.tile_t), s.G);
    s.in.x.set(s.x);
    s.in.history.set(s.history);
    s.in.weights.set(s.weights);
    s.in.bias.set(s.bias);
    s.in.c0.set(s.c0);

    // BLAS operands: row (t, b) of a is the window [x[t-k+1..t]][b][:]; column (g, h) of bmat the weights.
    const int64_t N = T * B, K = n * k, M = s.G * m;
    s.a.assign(N * K, 0.0f);
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < B; b++)
            for (int64_t j = 0; j < k; j++)
                for (int64_t c = 0; c < n; c++) {
                    int64_t tt = t - (k - 1) + j;
                    float val = tt >= 0 ? s.x(I(c), I(b), I(tt)) : s.history(I(c), I(b), I(tt + k - 1));
                    s.a[(t * B + b) * K + j * n + c] = val;
                }
    s.bmat.assign(K * M, 0.0f);
    for (int64_t j = 0; j < k; j++)
        for (int64_t c = 0; c < n; c++)
            for (int g = 0; g < s.G; g++)
                for (int64_t h = 0; h < m; h++) s.bmat[(j * n + c) * M + g * m + h] = s.weights(I(h), I(c), I(j), g);
    s.c.assign(N * M, 0.0f);
}

void ConvGemm::run_halide() { s_->pipeline.realize(s_->out); }

void ConvGemm::run_reference(size_t i) {
    State &s = *s_;
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
                    double blas = s.c[(t * s.shape.B + b) * M + g * s.shape.m + h] + s.bias(I(h), g);
                    diff = std::max(diff, std::abs(s.out(I(h), I(b), I(t), g) - blas));
                    ref = std::max(ref, std::abs(blas));
                }
    return ref > 0 ? diff / ref : diff;
}

struct PoolingScan::State {
    LayerShape shape;
    int G = 0;
    ImageParam gates{Float(32), 4, "gates"};
    ImageParam c0{Float(32), 2, "c0"};
    Pipeline pipeline;
    Buffer<float> gates_buf, c0_buf, c_out, h_out;
};

PoolingScan::PoolingScan(const std::string &pooling, const LayerShape &shape, const Target &target, bool chunked, int chunk)
    : s_(std::make_shared<State>()) {
    State &s = *s_;
    s.shape = shape;
    const PoolingVariant &v = find_pooling(pooling);
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
    use_buffer_cache(s.pipeline);
    s.pipeline.compile_jit(target);
    s.gates_buf = Buffer<float>(I(shape.m), I(shape.B), I(shape.T), s.G);
    s.c0_buf = Buffer<float>(I(shape.m), I(shape.B));
    fill(s.gates_buf, 5, 1.0f);
    s.gates_buf.for_each_value([](float &v) { v = 0.5f + 0.495f * v; });  // activated gates: in (0, 1)
    fill(s.c0_buf, 6, 0.5f);
    s.c_out = Buffer<float>(I(shape.m), I(shape.B), I(shape.T));
    s.h_out = Buffer<float>(I(shape.m), I(shape.B), I(shape.T));
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
    s.pipeline.compile_jit(target);
}

void Triad::run() { s_->pipeline.realize(s_->a); }
double Triad::bytes() const { return 3.0 * 4.0 * s_->n; }

}  // namespace qrnn::bench
