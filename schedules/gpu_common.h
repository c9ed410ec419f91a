// Schedule pieces shared by the GPU schedules (schedules/cuda_layer.cpp, schedules/cuda_backward.cpp,
// schedules/seq_cuda.cpp).
#pragma once
#include "schedules/schedule.h"

namespace qrnn {

// The knobs every CUDA schedule of the layer has: threads per block along h, unroll of the serial time loops.
inline KnobSpec gpu_threads_knob_spec() { return {"threads per block along h", {32, 64, 128}, 1, 1024}; }
inline KnobSpec gpu_unroll_knob_spec() { return {"unroll of the serial time loops", {1, 2, 4, 8}, 1, 16}; }

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

// The GEMM-shaped part of a backward (BackwardFuncs, core/qrnn_backward.h, or SeqBackwardFuncs, core/qrnn_seq.h:
// the same Funcs): dpre over `gate_rows` gate rows one thread per (h, b), the transposed weights, the dW and dx
// GEMMs (schedule_gpu_gemm) and the bias reduction, blocks of `threads`.
template <class Backward>
void schedule_gpu_backward_gemms(Backward &D, int gate_rows, int threads, int tile) {
    using Halide::TailStrategy;
    const Halide::Var c = D.c, h = D.h, b = D.b, t = D.t, g = D.g, j = D.j;
    Halide::Var ob("ob"), ot("ot"), pb("pb"), pt("pt"), tg("tg"), jg("jg");
    D.dpre.compute_root()
        .bound(g, 0, gate_rows)
        .fuse(t, g, tg)
        .gpu_tile(h, b, ob, pb, ot, pt, threads, 1, TailStrategy::RoundUp)
        .gpu_blocks(tg);
    D.weights_t.compute_root().fuse(j, g, jg).gpu_tile(c, h, ob, pb, ot, pt, 32, 1, TailStrategy::RoundUp).gpu_blocks(jg);
    schedule_gpu_gemm(D.dweights_acc, h, c, {j, g}, threads, tile, {D.dweights_r.x, D.dweights_r.y});
    schedule_gpu_gemm(D.dinput, c, t, {b}, threads, tile, {D.dinput_r.x, D.dinput_r.y, D.dinput_r.z});
    Halide::RVar rt = D.dbias_r.x, rb = D.dbias_r.y;
    D.dbias_acc.compute_root().split(h, ob, ot, threads, TailStrategy::RoundUp).gpu_threads(ot).gpu_blocks(ob, g);
    D.dbias_acc.update()
        .split(h, ob, ot, threads, TailStrategy::RoundUp)
        .reorder(rb, rt, ot, ob, g)
        .gpu_threads(ot)
        .gpu_blocks(ob, g);
}

}  // namespace qrnn
