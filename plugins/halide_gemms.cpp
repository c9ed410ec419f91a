#include "plugins/halide_gemms.h"

#include <mutex>

#include "core/masked_conv.h"
#include "runtime/kernel.h"
#include "runtime/compiled_layer.h"
#include "schedules/cpu_common.h"
#include "schedules/gemm_core.h"
#include "schedules/gemm_tuning.h"

namespace qrnn {
namespace {
using namespace Halide;

// ---- Algorithms ------------------------------------------------------------------------------------------
// On the GEMM core (schedules/gemm_core.h): M = h (the weights packed into panels of `mr` rows: one sequential
// stream per tile), N = t, further columns b, gates batched, K = r. Reads past the operands' edges are clamped (the
// core computes whole register tiles; `out`, an output, guards its tails).
struct RowGemm {
    ImageParam w{Float(32), 3, "w"};        // (h, g, r)
    ImageParam x{Float(32), 3, "x"};        // (r, b, t)
    ImageParam bias{Float(32), 2, "bias"};  // (h, g)
    Var h{"h"}, g{"g"}, b{"b"}, t{"t"};
    RDom r;                              // r; bf16: (ri, rp), r = 2 rp + ri
    Func w_packed{"row_gemm_w_packed"};  // (hi, r, g, ho)
    Func w_pairs{"row_gemm_w_pairs"};    // bf16: (ri, h, rp, g), 0 past the input width (core/masked_conv.h's layout)
    Func x_rounded{"row_gemm_x_rounded"};  // bf16: (r, b, t)
    Func acc{"row_gemm_acc"};            // (h, g, b, t): accumulates
    Func out{"row_gemm"};                // output
    Precision precision;

    RowGemm(int mr, Precision p) : precision(p) {
        const Expr H = w.dim(0).extent(), B = x.dim(1).extent(), T = x.dim(2).extent(), n = x.dim(0).extent();
        acc(h, g, b, t) = bias(min(h, bias.dim(0).extent() - 1), g);
        if (p == Precision::bf16) define_pairs(H, B, T, n);
        else define_packed(mr, H, B, T, n);
        out(h, g, b, t) = acc(h, g, b, t);
    }

private:
    void define_packed(int mr, const Expr &H, const Expr &B, const Expr &T, const Expr &n) {
        r = RDom(0, n, "row_gemm_r");
        Var hi("hi"), ho("ho"), rr("rr");
        w_packed(hi, rr, g, ho) = w(clamp(likely(ho * mr + hi), 0, H - 1), g, rr);
        acc(h, g, b, t) += w_packed(h % mr, r, g, h / mr) * x(r, min(b, B - 1), min(t, T - 1));
    }
    // The reduction over pairs of input channels, both operands rounded where produced (the dot product's layout).
    void define_pairs(const Expr &H, const Expr &B, const Expr &T, const Expr &n) {
        r = RDom(0, 2, 0, (n + 1) / 2, "row_gemm_r");
        Var ri("ri"), rp("rp"), rr("rr");
        Expr c = 2 * rp + ri;
        w_pairs(ri, h, rp, g) = cast(BFloat(16), select(c < n, w(clamp(likely(h), 0, H - 1), g, clamp(c, 0, n - 1)), 0.0f));
        x_rounded(rr, b, t) = cast(BFloat(16), x(clamp(rr, 0, n - 1), min(b, B - 1), min(t, T - 1)));
        acc(h, g, b, t) += cast<float>(w_pairs(r.x, h, r.y, g)) * cast<float>(x_rounded(2 * r.y + r.x, b, t));
    }
};

// On the GEMM core: M = v (d packed into panels of `mr` rows), N = c (a packed into panels of `nr` columns), K = the
// T*B rows (b inner, K blocks over t: a block is contiguous in both packs), as the QRNN's dW.
// bf16: the reduction over pairs of rows b (b = 2 bp + pi, 0 past B), both operands rounded where packed, as the
// QRNN's dW (core/qrnn_backward.h).
struct WeightGrad {
    ImageParam d{Float(32), 3, "d"};  // (v, b, t)
    ImageParam a{Float(32), 3, "a"};  // (c, b, t)
    Var v{"v"}, c{"c"};
    RDom rows;                              // (b, t); bf16: (pi, bp, t)
    Func d_packed{"weight_grad_d_packed"};  // (vi, b, t, vo)
    Func a_packed{"weight_grad_a_packed"};  // (ci, b, t, co)
    Func d_pairs{"weight_grad_d_pairs"};    // bf16: (pi, v, bp, t)
    Func a_pairs{"weight_grad_a_pairs"};    // bf16: (pi, c, bp, t)
    Func acc{"weight_grad_acc"};
    Func out{"weight_grad"};
    Precision precision;

    WeightGrad(int mr, int nr, Precision p) : precision(p) {
        const Expr V = d.dim(0).extent(), C = a.dim(0).extent();
        acc(v, c) = 0.0f;
        if (p == Precision::bf16) define_pairs(V, C);
        else define_packed(mr, nr, V, C);
        out(v, c) = acc(v, c);
    }

private:
    void define_packed(int mr, int nr, const Expr &V, const Expr &C) {
        rows = RDom(0, d.dim(1).extent(), 0, d.dim(2).extent(), "weight_grad_rows");
        Var vi("vi"), vo("vo"), ci("ci"), co("co"), b("b"), t("t");
        d_packed(vi, b, t, vo) = d(clamp(likely(vo * mr + vi), 0, V - 1), b, t);
        a_packed(ci, b, t, co) = a(min(co * nr + ci, C - 1), b, t);
        acc(v, c) += d_packed(v % mr, rows.x, rows.y, v / mr) * a_packed(c % nr, rows.x, rows.y, c / nr);
    }
    void define_pairs(const Expr &V, const Expr &C) {
        const Expr B = d.dim(1).extent();
        rows = RDom(0, 2, 0, (B + 1) / 2, 0, d.dim(2).extent(), "weight_grad_rows");
        Var pi("pi"), bp("bp"), t("t");
        Expr b = 2 * bp + pi;
        d_pairs(pi, v, bp, t) = cast(BFloat(16), select(b < B, d(clamp(likely(v), 0, V - 1), min(b, B - 1), t), 0.0f));
        a_pairs(pi, c, bp, t) = cast(BFloat(16), select(b < B, a(clamp(likely(c), 0, C - 1), min(b, B - 1), t), 0.0f));
        acc(v, c) += cast<float>(d_pairs(rows.x, v, rows.y, rows.z)) * cast<float>(a_pairs(rows.x, c, rows.y, rows.z));
    }
};

// ---- CPU schedules ---------------------------------------------------------------------------------------
void schedule(RowGemm &f, const GemmBlocking &blocking) {
    const OutputImageParam o = f.out.output_buffer();
    GemmDims dims{f.acc, f.h, f.t, {f.b}, {f.g}, {}, o.dim(3).extent(), o.dim(2).extent(), f.x.dim(0).extent()};
    for (int d = 0; d < f.r.dimensions(); d++) dims.reduction.push_back(f.r[d]);
    if (f.precision == Precision::bf16) {
        schedule_pairs_at_root(f.w_pairs, pair_rows(f.w.dim(0).extent()), f.w_pairs.args()[2], blocking.vec, 8);
        f.x_rounded.compute_root().vectorize(f.x_rounded.args()[0], blocking.vec, TailStrategy::RoundUp).parallel(f.t);
        dims.pairs = true, dims.blocked = 1, dims.operand_bytes = 2;
    } else {
        schedule_packed_panels(f.w_packed, blocking.vec);
    }
    dims.output = true;
    schedule_gemm(f.out, dims, o.dim(0).extent(), blocking);
}

// The packs walk their source in order, parallel over t. bf16: the pairs at root as the QRNN's dW's (K blocks over t).
void schedule(WeightGrad &f, const GemmBlocking &blocking) {
    const OutputImageParam o = f.out.output_buffer();
    GemmDims dims{f.acc, f.v, f.c, {}, {}, {f.rows.x, f.rows.y}, o.dim(1).extent(), 1, f.d.dim(1).extent() * f.d.dim(2).extent()};
    dims.blocked = 1;
    if (f.precision == Precision::bf16) {
        const std::vector<Var> p = f.d_pairs.args(), q = f.a_pairs.args();  // (pi, v, bp, t), (pi, c, bp, t)
        schedule_pairs_at_root(f.d_pairs, pair_rows(f.d.dim(0).extent()), p[3], blocking.vec);
        schedule_pairs_at_root(f.a_pairs, Expr(), q[3], blocking.vec);
        dims.reduction = {f.rows.x, f.rows.y, f.rows.z};
        dims.pairs = true, dims.blocked = 2, dims.operand_bytes = 2;
        dims.k_steps = (f.d.dim(1).extent() + 1) / 2 * 2 * f.d.dim(2).extent();
    } else {
        const std::vector<Var> p = f.d_packed.args(), q = f.a_packed.args();  // (vi, b, t, vo), (ci, b, t, co)
        schedule_panels_in_source_order(f.d_packed, p[2], blocking.vec);
        schedule_panels_in_source_order(f.a_packed, q[2], 0);
    }
    dims.output = true;
    schedule_gemm(f.out, dims, o.dim(0).extent(), blocking);
}

// weight_grad's blocking: the QRNN dW's register tile (it is that GEMM's shape).
GemmBlocking weight_grad_blocking(const Target &target) { return gemm_blocking(target, gemm_core_knobs(target).dweights); }

struct Compiled {
    Target target = get_jit_target_from_environment();
    GemmBlocking blocking = gemm_blocking(target), wg_blocking = weight_grad_blocking(target);
    int width, rows;  // the callers' padding: gemm_tile_for's floats x rows
    RowGemm row{blocking.rows(), Precision::f32};
    WeightGrad wg{wg_blocking.rows(), wg_blocking.tile.t, Precision::f32};
    Kernel row_pipeline, wg_pipeline;
    std::mutex mutex;

    Compiled() {
        const int vec = target.natural_vector_size<float>();
        const GemmTile tile = gemm_tile_for(target);
        width = tile.h_vectors * vec;
        rows = tile.t;
        schedule(row, blocking);
        schedule(wg, wg_blocking);
        row_pipeline = Pipeline(row.out);
        wg_pipeline = Pipeline(wg.out);
        compile_kernels({&row_pipeline, &wg_pipeline}, target);
    }
};

// row_gemm and weight_grad in bf16, each compiled at its first use (f32 callers do not pay for them).
template <class Gemm>
struct CompiledBf16 {
    Target target = get_jit_target_from_environment();
    GemmBlocking blocking;
    Gemm gemm;
    Kernel pipeline;
    std::mutex mutex;

    CompiledBf16(GemmBlocking b, Gemm g) : blocking(b), gemm(std::move(g)) {
        schedule(gemm, blocking);
        pipeline = Pipeline(gemm.out);
        compile_kernels({&pipeline}, target);
    }
};

Compiled &compiled() {
    // The environment's target is fixed for the process: looked up once (gemm_tile() is called per call of a
    // layer), then a reference into the cache.
    static Compiled &c = environment_pipeline<Compiled>([] { return std::make_shared<Compiled>(); });
    return c;
}
}  // namespace

Pipeline row_gemm_pipeline(Precision precision, const Target &target) {
    const GemmBlocking blocking = gemm_blocking(target);
    RowGemm row(blocking.rows(), precision);
    schedule(row, blocking);
    return Pipeline(row.out);
}

Pipeline weight_grad_pipeline(Precision precision, const Target &target) {
    const GemmBlocking blocking = weight_grad_blocking(target);
    WeightGrad wg(blocking.rows(), blocking.tile.t, precision);
    schedule(wg, blocking);
    return Pipeline(wg.out);
}

int gemm_tile() { return compiled().width; }
int gemm_rows() { return compiled().rows; }

namespace {
void run_row_gemm(RowGemm &row, Kernel &pipeline, const Buffer<float> &w, const Buffer<float> &x,
                  const Buffer<float> &bias, Buffer<float> &out) {
    row.w.set(w);
    row.x.set(x);
    row.bias.set(bias);
    pipeline.realize(Realization(out));
}
}  // namespace

void row_gemm(const Buffer<float> &w, const Buffer<float> &x, const Buffer<float> &bias, Buffer<float> &out,
              Precision precision) {
    if (precision == Precision::bf16) {
        static CompiledBf16<RowGemm> &c = environment_pipeline<CompiledBf16<RowGemm>>([] {
            const GemmBlocking b = gemm_blocking(get_jit_target_from_environment());
            return std::make_shared<CompiledBf16<RowGemm>>(b, RowGemm(b.rows(), Precision::bf16));
        });
        std::lock_guard<std::mutex> lock(c.mutex);
        return run_row_gemm(c.gemm, c.pipeline, w, x, bias, out);
    }
    Compiled &c = compiled();
    std::lock_guard<std::mutex> lock(c.mutex);
    run_row_gemm(c.row, c.row_pipeline, w, x, bias, out);
}

void weight_grad(const Buffer<float> &d, const Buffer<float> &a, Buffer<float> &out, Precision precision) {
    auto run = [&](WeightGrad &wg, Kernel &pipeline) {
        wg.d.set(d);
        wg.a.set(a);
        pipeline.realize(Realization(out));
    };
    if (precision == Precision::bf16) {
        static CompiledBf16<WeightGrad> &c = environment_pipeline<CompiledBf16<WeightGrad>>([] {
            const GemmBlocking b = weight_grad_blocking(get_jit_target_from_environment());
            return std::make_shared<CompiledBf16<WeightGrad>>(b, WeightGrad(b.rows(), b.tile.t, Precision::bf16));
        });
        std::lock_guard<std::mutex> lock(c.mutex);
        return run(c.gemm, c.pipeline);
    }
    Compiled &c = compiled();
    std::lock_guard<std::mutex> lock(c.mutex);
    run(c.wg, c.wg_pipeline);
}

Buffer<float> view(Tensor<float> &t) {
    std::vector<int> dims(t.shape.rbegin(), t.shape.rend());
    return Buffer<float>(t.data.data(), dims);
}

Buffer<float> view(const float *data, const std::vector<std::pair<int, int>> &extent_stride) {
    std::vector<halide_dimension_t> dims;
    for (auto [extent, stride] : extent_stride) dims.push_back({0, extent, stride});
    return Buffer<float>(const_cast<float *>(data), static_cast<int>(dims.size()), dims.data());
}

Tensor<float> pad_last(const Tensor<float> &src, int64_t width_pad) {
    Tensor<float> dst;
    return pad_last_into(src, width_pad, dst);
}

Tensor<float> &pad_last_into(const Tensor<float> &src, int64_t width_pad, Tensor<float> &dst) {
    std::vector<int64_t> dims = src.shape;
    const int64_t width = dims.back();
    dims.back() = width_pad;
    ensure_shape(dst, dims);
    const size_t rows = src.size() / width;
    for (size_t r = 0; r < rows; r++)
        std::copy(src.data.begin() + r * width, src.data.begin() + (r + 1) * width, dst.data.begin() + r * width_pad);
    return dst;
}

}  // namespace qrnn
