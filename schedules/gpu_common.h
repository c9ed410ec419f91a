// Schedule pieces shared by the GPU schedules (schedules/cuda_layer.cpp, schedules/cuda_backward.cpp).
#pragma once
#include "schedules/schedule.h"

namespace qrnn {

// A scan stage: one thread per (h, b) in blocks of `threads` along h, the serial loop r unrolled by `unroll`
// (r undefined for a stage without one).
void schedule_gpu_scan(Halide::Stage scan, const Halide::Var &h, const Halide::Var &b, const Halide::RVar &r,
                       int threads, int unroll);

// Padded inputs and clamped weights copied once, 32-wide thread rows, every other dimension a block dim.
void schedule_gpu_inputs(LayerFuncs &L);

// A GEMM-shaped reduction `acc` (a, tiled, rest): its wrapper gives each thread one a and `tile` consecutive
// values of `tiled`, accumulated in registers over the whole reduction; blocks of `threads` along a, the
// tiles of `tiled`, and `rest` (one or two Vars) fused into one block dimension.
void schedule_gpu_gemm(Halide::Func acc, const Halide::Var &a, const Halide::Var &tiled, const std::vector<Halide::Var> &rest,
                       int threads, int tile, const std::vector<Halide::VarOrRVar> &reduction);

}  // namespace qrnn
