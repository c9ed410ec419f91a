// GPU schedules of the layer (CUDA, capability >= 80; the same schedules run on OpenCL for the PoCL tests).
// Figure: none timed (no GPU on the 2-core AVX-512 VM); ptxas sm_90: 0 spills, 17-58 registers per kernel
// (docs/schedules.md); correct on OpenCL/PoCL (tests/test_gpu_opencl.cpp).
#include "core/chunked_scan.h"
#include "schedules/autoschedule.h"
#include "schedules/gpu_common.h"

namespace qrnn {
using namespace Halide;

void schedule_gpu_scan(Stage scan, const Var &h, const Var &b, const RVar &r, int threads, int unroll) {
    Var hb("hb"), bb("bb"), ht("ht"), bt("bt");
    RVar ro("ro"), ri("ri");
    scan.gpu_tile(h, b, hb, bb, ht, bt, threads, 1, TailStrategy::GuardWithIf);
    if (unroll > 1) scan.split(r, ro, ri, unroll, TailStrategy::GuardWithIf).unroll(ri);
}

void schedule_gpu_inputs(LayerFuncs &L) {
    Var c = L.c, h = L.h, b = L.b, t = L.t, g = L.g;
    Var co("co"), ci("ci"), bo("bo"), bi("bi"), ho("ho"), hi("hi"), jg("jg");
    L.input_padded.compute_root().gpu_tile(c, b, co, bo, ci, bi, 32, 1, TailStrategy::RoundUp).gpu_blocks(t);
    L.weights_clamped.compute_root().fuse(t, g, jg).gpu_tile(h, c, ho, co, hi, ci, 32, 1, TailStrategy::RoundUp).gpu_blocks(jg);
}

namespace {

// "cuda-tiled": conv as a tiled GEMM (a (threads x 1) block of h per (tile_t, b, g); each thread
// accumulates tile_t outputs in registers), then the scan, one thread per (h, b).
void apply_gpu_tiled(LayerFuncs &L, const LayerInputs &, const Target &, const Knobs &knobs) {
    const int threads = knobs.at("threads"), tile_t = knobs.at("tile_t");
    Var h = L.h, b = L.b, t = L.t, g = L.g;
    Var to("to"), ti("ti"), ho("ho"), hi("hi"), tt("tt"), tu("tu"), bg("bg");
    schedule_gpu_inputs(L);
    Func conv_out = L.conv.in();
    conv_out.compute_root()
        .split(t, tt, tu, tile_t, TailStrategy::RoundUp)
        .fuse(b, g, bg)
        .reorder(tu, h, tt, bg)
        .gpu_tile(h, tt, ho, to, hi, ti, threads, 4, TailStrategy::RoundUp)
        .gpu_blocks(bg)
        .unroll(tu);
    L.conv.compute_at(conv_out, hi).unroll(t);
    L.conv.update().reorder(t, L.conv_r.x, L.conv_r.y).unroll(t);
    schedule_gpu_scan(L.cell.update(0), h, b, RVar(), threads, 1);
    schedule_gpu_scan(L.cell.update(1), h, b, L.scan_r.x, threads, knobs.at("unroll"));
}

// "cuda-fused": one thread per (h, b) scans time in chunks and computes its own conv (G x chunk values,
// a dot product over (c, j) each) per chunk, so gates never leave the thread.
Pipeline build_gpu_fused(const LayerInputs &in, const PoolingVariant &variant, const Target &, const Knobs &knobs,
                         const LayerShape &) {
    const int threads = knobs.at("threads"), chunk = knobs.at("chunk");
    LayerFuncs L = define_qrnn_layer(in, variant);
    SingleScan S = single_scan(scan_source(L, in));
    Var h = L.h, t = L.t, g = L.g;
    Var hb("hb"), bb("bb"), ht("ht"), bt("bt");
    schedule_gpu_inputs(L);
    RVar ro("ro"), ri("ri");
    S.cell.update(0)
        .gpu_tile(h, L.b, hb, bb, ht, bt, threads, 1, TailStrategy::GuardWithIf)
        .split(S.r.x, ro, ri, chunk, TailStrategy::GuardWithIf);
    L.conv.bound(g, 0, variant.gate_count());
    L.conv.compute_at(S.cell, ro).unroll(g).unroll(t, chunk, TailStrategy::RoundUp);
    L.conv.update().reorder(g, t, L.conv_r.x, L.conv_r.y).unroll(g).unroll(t, chunk, TailStrategy::RoundUp);
    return Pipeline(S.cell);
}

const bool cuda_layer_registered = [] {
    LayerSchedule tiled{{"cuda-tiled", "GPU: tiled GEMM conv, scan one thread per (batch, channel), time unrolled", "gpu",
                         {{"threads", 64}, {"tile_t", 4}, {"unroll", 4}}},
                        apply_gpu_tiled};
    tiled.knob_specs = {{"threads", gpu_threads_knob_spec()},
                        {"tile_t", {"GEMM outputs per thread along t", {2, 4, 8}, 1, 16}},
                        {"unroll", gpu_unroll_knob_spec()}};
    register_layer_schedule(tiled);
    LayerSchedule fused{{"cuda-fused", "GPU: conv per time chunk inside the per-thread scan", "gpu", {{"threads", 64}, {"chunk", 4}}}};
    fused.knob_specs = {{"threads", gpu_threads_knob_spec()},
                        {"chunk", {"time steps of conv computed per chunk, unrolled", {2, 4, 8}, 1, 16}}};
    fused.build = build_gpu_fused;
    register_layer_schedule(fused);
    register_layer_schedule(auto_layer_schedule("Li2018", "gpu"));
    return true;
}();
}  // namespace
}  // namespace qrnn
