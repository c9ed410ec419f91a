// GEMM-shaped Halide pipelines shared by the baselines' forward and backward passes (lstm-halide, cnn),
// JIT-compiled once for the JIT target. Their ImageParams are shared: each call holds a lock.
//   row_gemm:    out(h, g, b, t) = bias(h, g) + sum_r w(h, g, r) * x(r, min(b, B_x - 1), t)
//                (one GEMM over all T*B rows; rows b >= B_x of a padded batch repeat row B_x - 1)
//   weight_grad: out(v, c) = sum_{b, t} d(v, b, t) * a(min(c, C_a - 1), b, t)
//                (the weight-gradient GEMM, d^T a, reducing over all T*B rows; columns c >= C_a of a padded
//                output repeat the last one)
// Dimensions are Halide's (innermost first). Both run on the GEMM core (schedules/gemm_core.h: its knobs for the JIT
// target, row_gemm with the conv's register tile, weight_grad with dW's) and take outputs of any extent. The callers
// pad m to gemm_tile() and B to gemm_rows() (gemm_tile_for: 2 vectors x 8 rows with AVX-512's 32 vector registers,
// 2 x 6 with AVX2's 16): the tiles of their per-step pipelines.
#pragma once
#include <Halide.h>

#include "core/precision.h"
#include "runtime/tensor.h"

namespace qrnn {

int gemm_tile();  // floats of the per-step pipelines' register tile (2 vectors of the JIT target)
int gemm_rows();  // its rows

// bf16: w and x rounded to bfloat16 where packed, products accumulated in f32 (core/precision.h).
void row_gemm(const Halide::Buffer<float> &w, const Halide::Buffer<float> &x, const Halide::Buffer<float> &bias,
              Halide::Buffer<float> &out, Precision precision = Precision::f32);
// row_gemm's pipeline scheduled for `target` (to inspect its code; row_gemm runs the JIT target's).
Halide::Pipeline row_gemm_pipeline(Precision precision, const Halide::Target &target);
// bf16: d and a rounded to bfloat16 where packed, the reduction over pairs of rows b (0 past B), f32 sums.
void weight_grad(const Halide::Buffer<float> &d, const Halide::Buffer<float> &a, Halide::Buffer<float> &out,
                 Precision precision = Precision::f32);
// weight_grad's pipeline scheduled for `target` (to inspect its code).
Halide::Pipeline weight_grad_pipeline(Precision precision, const Halide::Target &target);

// Halide views of host memory (no copy): a tensor with its dimensions reversed, or explicit
// (extent, stride) pairs innermost first.
Halide::Buffer<float> view(Tensor<float> &t);
Halide::Buffer<float> view(const float *data, const std::vector<std::pair<int, int>> &extent_stride);
// Row-major [rows][width] -> [rows][width_pad], zero padded. pad_last_into reuses dst when its shape fits
// (its padding stays zero): fresh allocations cost page faults, expensive in a VM.
Tensor<float> pad_last(const Tensor<float> &src, int64_t width_pad);
Tensor<float> &pad_last_into(const Tensor<float> &src, int64_t width_pad, Tensor<float> &dst);
inline int64_t round_up(int64_t v, int64_t f) { return (v + f - 1) / f * f; }

}  // namespace qrnn
