// GPU training schedule "cuda-tiled" (schedules/training_schedule.h): the forward is the "cuda-tiled" layer
// schedule with the activated gates stored as the tape; the backward: the reverse scan one thread per (h, b)
// (time unrolled), dpre element-wise, dweights and dinput as GEMMs with one output row per thread and
// `tile` outputs in its registers, dbias one thread per (h, g). Compiled for CUDA capability 80 and assembled
// with ptxas for sm_90 by tests/test_gpu_ptxas_training.py; no GPU here to time or run it on.
#include "schedules/gpu_common.h"
#include "schedules/training_schedule.h"

namespace qrnn {
using namespace Halide;

void schedule_gpu_gemm(Func acc, const Var &a, const Var &tiled, const std::vector<Var> &rest, int threads, int tile,
                       const std::vector<VarOrRVar> &reduction) {
    Var ab("ab"), at("at"), to("to"), ti("ti"), rb("rest");
    Func w = acc.in();
    w.compute_root();
    if (rest.size() == 2)
        w.fuse(rest[0], rest[1], rb);
    else
        rb = rest.at(0);
    w.split(tiled, to, ti, tile, TailStrategy::RoundUp)
        .split(a, ab, at, threads, TailStrategy::RoundUp)
        .reorder(ti, at, ab, to, rb)
        .gpu_threads(at)
        .gpu_blocks(ab, to, rb)
        .unroll(ti);
    acc.compute_at(w, at).unroll(tiled);
    std::vector<VarOrRVar> update_order{tiled, a};
    update_order.insert(update_order.end(), reduction.begin(), reduction.end());
    acc.update().reorder(update_order).unroll(tiled);
}

namespace {

void forward_cuda(LayerFuncs &L, const LayerInputs &in, const Target &target, const Knobs &knobs) {
    const LayerSchedule &tiled = find_layer_schedule("cuda-tiled");
    Knobs forward_knobs;
    for (auto &kv : tiled.defaults) forward_knobs[kv.first] = knobs.at(kv.first);
    tiled.apply(L, in, target, forward_knobs);
    Var tg("tg"), ho("ho"), hi("hi"), bo("bo"), bi("bi");
    L.gates.bound(L.g, 0, L.variant->gate_count())
        .fuse(L.t, L.g, tg)
        .gpu_tile(L.h, L.b, ho, bo, hi, bi, knobs.at("threads"), 1, TailStrategy::GuardWithIf)
        .gpu_blocks(tg);
}

void backward_cuda(BackwardFuncs &D, const BackwardInputs &, const Target &, const Knobs &knobs) {
    const int threads = knobs.at("threads"), tile = knobs.at("tile_t");
    Var c = D.c, h = D.h, b = D.b, t = D.t, g = D.g, j = D.j;
    Var ob("ob"), ot("ot"), pb("pb"), pt("pt"), jg("jg");
    schedule_gpu_inputs(D.fwd);
    D.dcell.compute_root();
    schedule_gpu_scan(D.dcell.update(0), h, b, RVar(), threads, 1);
    schedule_gpu_scan(D.dcell.update(1), h, b, D.dcell_r.x, threads, knobs.at("unroll"));
    schedule_gpu_backward_gemms(D, D.variant->gate_count(), threads, tile);

    // Outputs: 32-wide thread rows, guarded.
    D.dweights.fuse(j, g, jg).gpu_tile(h, c, ob, pb, ot, pt, 32, 1, TailStrategy::GuardWithIf).gpu_blocks(jg);
    D.dbias.gpu_tile(h, g, ob, pb, ot, pt, 32, 1, TailStrategy::GuardWithIf);
    D.dx.gpu_tile(c, b, ob, pb, ot, pt, 32, 1, TailStrategy::GuardWithIf).gpu_blocks(t);
    D.dhistory.gpu_tile(c, b, ob, pb, ot, pt, 32, 1, TailStrategy::GuardWithIf).gpu_blocks(j);
    D.dc0.gpu_tile(h, b, ob, pb, ot, pt, 32, 1, TailStrategy::GuardWithIf);
}

const bool cuda_backward_registered = [] {
    TrainingSchedule s{{"cuda-tiled", "GPU: cuda-tiled forward with tape; reverse scan per thread, GEMMs per thread row", "gpu",
                        {{"threads", 64}, {"tile_t", 4}, {"unroll", 4}}}};
    s.knob_specs = {{"threads", gpu_threads_knob_spec()},
                    {"tile_t", {"GEMM outputs per thread (forward conv along t; dW along c; dx along t)", {2, 4, 8}, 1, 16}},
                    {"unroll", gpu_unroll_knob_spec()}};
    s.apply_forward = forward_cuda;
    s.apply_backward = backward_cuda;
    register_training_schedule(s);
    return true;
}();
}  // namespace
}  // namespace qrnn
