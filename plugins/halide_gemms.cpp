#include "plugins/halide_gemms.h"

#include <mutex>

#include "runtime/jit_compile.h"
#include "schedules/cpu_common.h"

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

// Reduced in chunks of about kChunkRows rows (whole steps t): a partial product per chunk, added into the
// output, so that a chunk of d and a stays in cache while every output tile reads it.
constexpr int kChunkRows = 64;
struct WeightGrad {
    ImageParam d{Float(32), 3, "d"};  // (v, b, t)
    ImageParam a{Float(32), 3, "a"};  // (c, b, t)
    Var v{"v"}, c{"c"}, k{"k"};
    Expr steps;  // steps per chunk
    RDom in_chunk, chunks;
    Func partial{"weight_grad_partial"};  // (v, c, k): chunk k's product
    Func out{"weight_grad"};

    WeightGrad() {
        Expr B = d.dim(1).extent(), T = d.dim(2).extent();
        steps = max(1, kChunkRows / B);
        in_chunk = RDom(0, B, 0, steps, "weight_grad_rows");
        in_chunk.where(k * steps + in_chunk.y < T);
        Expr t = min(k * steps + in_chunk.y, T - 1);  // (the where clause skips the clamped rows)
        partial(v, c, k) = 0.0f;
        partial(v, c, k) += d(v, in_chunk.x, t) * a(min(c, a.dim(0).extent() - 1), in_chunk.x, t);
        chunks = RDom(0, (T + steps - 1) / steps, "weight_grad_chunks");
        out(v, c) = 0.0f;
        out(v, c) += partial(v, c, chunks);
    }
};

// ---- CPU schedules ---------------------------------------------------------------------------------------
// row_gemm: register-blocked, width (2 vectors) of h x rows of b per tile, parallel over t.
void schedule(RowGemm &f, int vec, int width, int rows) {
    Var ho("ho"), hi("hi"), bo("bo"), bi("bi");
    f.out.tile(f.h, f.b, ho, bo, hi, bi, width, rows).reorder(hi, bi, ho, f.g, bo, f.t).vectorize(hi, vec).parallel(f.t);
    f.acc.compute_at(f.out, ho).vectorize(f.h, vec).unroll(f.h).unroll(f.b);
    f.acc.update().reorder(f.h, f.b, f.r.x).vectorize(f.h, vec).unroll(f.h).unroll(f.b);
}

// weight_grad: chunk by chunk (serial), every output tile of width of v x rows columns c (parallel over
// the v strips) accumulates the chunk's rows in registers, then adds them into the output.
void schedule(WeightGrad &f, int vec, int width, int rows) {
    Var vo("vo"), vi("vi"), co("co"), ci("ci");
    f.out.vectorize(f.v, vec).parallel(f.c);
    f.out.update()
        .split(f.v, vo, vi, width)
        .split(f.c, co, ci, rows)
        .reorder(vi, ci, co, vo, f.chunks)
        .vectorize(vi, vec)
        .unroll(vi)
        .unroll(ci)
        .parallel(vo);
    f.partial.compute_at(f.out, co).vectorize(f.v, vec).unroll(f.v).unroll(f.c);
    f.partial.update().reorder(f.v, f.c, f.in_chunk.x, f.in_chunk.y).vectorize(f.v, vec).unroll(f.v).unroll(f.c);
}

struct Compiled {
    int width, rows;  // the register tile: floats x rows
    RowGemm row;
    WeightGrad wg;
    Pipeline row_pipeline, wg_pipeline;
    std::mutex mutex;

    Compiled() {
        Target target = get_jit_target_from_environment();
        const int vec = target.natural_vector_size<float>();
        const GemmTile tile = gemm_tile_for(target);
        width = tile.h_vectors * vec;
        rows = tile.t;
        schedule(row, vec, width, rows);
        schedule(wg, vec, width, rows);
        row_pipeline = Pipeline(row.out);
        wg_pipeline = Pipeline(wg.out);
        compile_jit_pipelines({&row_pipeline, &wg_pipeline}, target);
    }
};

Compiled &compiled() {
    static Compiled c;
    return c;
}
}  // namespace

int gemm_tile() { return compiled().width; }
int gemm_rows() { return compiled().rows; }

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
