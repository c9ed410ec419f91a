// GEMM-shaped Halide pipelines shared by the baselines' forward and backward passes (lstm-halide, cnn),
// JIT-compiled once for the host target. Their ImageParams are shared: each call holds a lock.
//   row_gemm:    out(h, g, b, t) = bias(h, g) + sum_r w(h, g, r) * x(r, min(b, B_x - 1), t)
//                (one GEMM over all T*B rows; rows b >= B_x of a padded batch repeat row B_x - 1)
//   weight_grad: out(v, c) = sum_{b, t} d(v, b, t) * a(c, b, t)
//                (the weight-gradient GEMM, d^T a, reducing over all T*B rows)
// Dimensions are Halide's (innermost first). Output extents: h and v multiples of gemm_tile(), b and c
// multiples of kGemmRows (pad the buffers; callers copy the valid part out).
#pragma once
#include <Halide.h>

#include "runtime/tensor.h"

namespace qrnn {

constexpr int kGemmRows = 8;
int gemm_tile();  // 2 vectors of floats of the JIT target

void row_gemm(const Halide::Buffer<float> &w, const Halide::Buffer<float> &x, const Halide::Buffer<float> &bias,
              Halide::Buffer<float> &out);
void weight_grad(const Halide::Buffer<float> &d, const Halide::Buffer<float> &a, Halide::Buffer<float> &out);

// Halide views of host memory (no copy): a tensor with its dimensions reversed, or explicit
// (extent, stride) pairs innermost first.
Halide::Buffer<float> view(Tensor<float> &t);
Halide::Buffer<float> view(const float *data, const std::vector<std::pair<int, int>> &extent_stride);
// Row-major [rows][width] -> [rows][width_pad], zero padded.
Tensor<float> pad_last(const Tensor<float> &src, int64_t width_pad);
inline int64_t round_up(int64_t v, int64_t f) { return (v + f - 1) / f * f; }

}  // namespace qrnn
