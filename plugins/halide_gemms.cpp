#include "plugins/halide_gemms.h"

#include <mutex>

namespace qrnn {
namespace {
using namespace Halide;

// ---- Algorithms ------------------------------------------------------------------------------------------
struct RowGemm {
    ImageParam w{Float(32), 3, "w"};        // (h, g, r)
    ImageParam x{Float(32), 3, "x"};        // (r, b, t)
    ImageParam bias{Float(32), 2, "bias"};  // (h, g)
    Var h{"h"}, g{"g"}, b{"b"}, t{"t"};
    RDom r;
    Func acc{"row_gemm_acc"};  // (h, g, b, t): accumulates
    Func out{"row_gemm"};      // output

    RowGemm() {
        Expr B = x.dim(1).extent();
        r = RDom(0, x.dim(0).extent(), "row_gemm_r");
        acc(h, g, b, t) = bias(h, g);
        acc(h, g, b, t) += w(h, g, r) * x(r, min(b, B - 1), t);
        out(h, g, b, t) = acc(h, g, b, t);
    }
};

struct WeightGrad {
    ImageParam d{Float(32), 3, "d"};  // (v, b, t)
    ImageParam a{Float(32), 3, "a"};  // (c, b, t)
    Var v{"v"}, c{"c"};
    RDom rows;
    Func acc{"weight_grad_acc"};  // (v, c)
    Func out{"weight_grad"};

    WeightGrad() {
        rows = RDom(0, d.dim(1).extent(), 0, d.dim(2).extent(), "weight_grad_rows");
        acc(v, c) = 0.0f;
        acc(v, c) += d(v, rows.x, rows.y) * a(c, rows.x, rows.y);
        out(v, c) = acc(v, c);
    }
};

// ---- CPU schedules ---------------------------------------------------------------------------------------
// row_gemm: register-blocked, 2 vectors of h x 8 rows of b per tile, parallel over t.
void schedule(RowGemm &f, int vec) {
    Var ho("ho"), hi("hi"), bo("bo"), bi("bi");
    f.out.tile(f.h, f.b, ho, bo, hi, bi, 2 * vec, kGemmRows).reorder(hi, bi, ho, f.g, bo, f.t).vectorize(hi, vec).parallel(f.t);
    f.acc.compute_at(f.out, ho).vectorize(f.h, vec).unroll(f.h).unroll(f.b);
    f.acc.update().reorder(f.h, f.b, f.r.x).vectorize(f.h, vec).unroll(f.h).unroll(f.b);
}

// weight_grad: 2 vectors of v x 8 columns c of accumulators per tile, reducing over all rows; the c tiles
// innermost so that a strip of d (all rows x 2 vectors) stays in L2 while every c tile reads it; parallel
// over the v strips.
void schedule(WeightGrad &f, int vec) {
    Var vo("vo"), vi("vi"), co("co"), ci("ci");
    f.out.tile(f.v, f.c, vo, co, vi, ci, 2 * vec, kGemmRows).reorder(vi, ci, co, vo).vectorize(vi, vec).parallel(vo);
    f.acc.compute_at(f.out, co).vectorize(f.v, vec).unroll(f.v).unroll(f.c);
    f.acc.update().reorder(f.v, f.c, f.rows.x, f.rows.y).vectorize(f.v, vec).unroll(f.v).unroll(f.c);
}

struct Compiled {
    int vec;
    RowGemm row;
    WeightGrad wg;
    Pipeline row_pipeline, wg_pipeline;
    std::mutex mutex;

    Compiled() {
        Target target = get_jit_target_from_environment();
        vec = target.natural_vector_size<float>();
        schedule(row, vec);
        schedule(wg, vec);
        row_pipeline = Pipeline(row.out);
        wg_pipeline = Pipeline(wg.out);
        row_pipeline.compile_jit(target);
        wg_pipeline.compile_jit(target);
    }
};

Compiled &compiled() {
    static Compiled c;
    return c;
}
}  // namespace

int gemm_tile() { return 2 * compiled().vec; }

void row_gemm(const Buffer<float> &w, const Buffer<float> &x, const Buffer<float> &bias, Buffer<float> &out) {
    Compiled &c = compiled();
    std::lock_guard<std::mutex> lock(c.mutex);
    c.row.w.set(w);
    c.row.x.set(x);
    c.row.bias.set(bias);
    c.row_pipeline.realize(Realization(out));
}

void weight_grad(const Buffer<float> &d, const Buffer<float> &a, Buffer<float> &out) {
    Compiled &c = compiled();
    std::lock_guard<std::mutex> lock(c.mutex);
    c.wg.d.set(d);
    c.wg.a.set(a);
    c.wg_pipeline.realize(Realization(out));
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
    std::vector<int64_t> dims = src.shape;
    const int64_t width = dims.back();
    dims.back() = width_pad;
    Tensor<float> dst(dims);
    const size_t rows = src.size() / width;
    for (size_t r = 0; r < rows; r++)
        std::copy(src.data.begin() + r * width, src.data.begin() + (r + 1) * width, dst.data.begin() + r * width_pad);
    return dst;
}

}  // namespace qrnn
