// GPU schedule "cuda-tiled" of the variable-length / bidirectional layer (schedules/seq_schedule.h): the conv
// and forward scan as the "cuda-tiled" layer schedule (one tiled GEMM over every direction's gate rows), the
// reverse scan likewise one thread per (h, b); backward as the plain layer's "cuda-tiled" training schedule
// (scans per thread, dW and dx as per-thread-row GEMMs). Compiled for CUDA capability 80 and PTX-assembled
// for sm_90 by tests/test_gpu_ptxas_seq.py (qrnn_aot seq-forward|seq-backward); no GPU here to run it on.
#include "schedules/gpu_common.h"
#include "schedules/seq_schedule.h"

namespace qrnn {
namespace {
using namespace Halide;

constexpr int kThreads = 64, kTile = 4, kUnroll = 4;

// A (h, b, rest...) elementwise stage: 32-wide thread rows of h, guarded; the other dimensions blocks.
void schedule_gpu_elementwise(Func f, const Var &x, const Var &y, const std::vector<Var> &blocks) {
    Var xo("xo"), yo("yo"), xi("xi"), yi("yi"), fused("fused");
    f.gpu_tile(x, y, xo, yo, xi, yi, 32, 1, TailStrategy::GuardWithIf);
    if (blocks.size() == 2) f.fuse(blocks[0], blocks[1], fused).gpu_blocks(fused);
    else if (blocks.size() == 1) f.gpu_blocks(blocks[0]);
}

void seq_forward_cuda(SeqFuncs &S, const SeqInputs &in, const Target &target, const Knobs &) {
    LayerFuncs &L = S.L;
    find_layer_schedule("cuda-tiled").apply(L, in.layer, target, {{"threads", kThreads}, {"tile_t", kTile}, {"unroll", kUnroll}});
    L.cell.compute_root();
    Var tg("tg"), ho("ho"), hi("hi"), bo("bo"), bi("bi"), d("d");
    L.gates.bound(L.g, 0, L.gate_extent())
        .fuse(L.t, L.g, tg)
        .gpu_tile(L.h, L.b, ho, bo, hi, bi, kThreads, 1, TailStrategy::GuardWithIf)
        .gpu_blocks(tg);
    if (S.options.directions == 2) {
        S.rev_cell.compute_root();
        schedule_gpu_scan(S.rev_cell.update(0), L.h, L.b, RVar(), kThreads, 1);
        schedule_gpu_scan(S.rev_cell.update(1), L.h, L.b, S.rev_r.x, kThreads, kUnroll);
    }
}

void seq_backward_cuda(SeqBackwardFuncs &D, const SeqBackwardInputs &, const Target &, const Knobs &) {
    Var c = D.c, h = D.h, b = D.b, t = D.t, g = D.g, j = D.j;
    schedule_gpu_inputs(D.fwd.L);
    D.dcell.compute_root();
    schedule_gpu_scan(D.dcell.update(0), h, b, RVar(), kThreads, 1);
    schedule_gpu_scan(D.dcell.update(1), h, b, D.dcell_r.x, kThreads, kUnroll);
    if (D.gate_rows > D.fwd.L.variant->gate_count()) {
        D.rev_dcell.compute_root();
        schedule_gpu_scan(D.rev_dcell.update(0), h, b, RVar(), kThreads, 1);
        schedule_gpu_scan(D.rev_dcell.update(1), h, b, D.rev_dcell_r.x, kThreads, kUnroll);
    }
    schedule_gpu_backward_gemms(D, D.gate_rows, kThreads, kTile);
    schedule_gpu_elementwise(D.dweights, h, c, {j, g});
    schedule_gpu_elementwise(D.dbias, h, g, {});
    schedule_gpu_elementwise(D.dx, c, b, {t});
    schedule_gpu_elementwise(D.dhistory, c, b, {j});
    schedule_gpu_elementwise(D.dc0, h, b, {});
}

const bool seq_cuda_registered = [] {
    register_seq_schedule({{"cuda-tiled", "GPU: tiled GEMM conv over both directions' rows, scans one thread per (h, b)", "gpu"},
                           seq_forward_cuda, seq_backward_cuda});
    return true;
}();
}  // namespace
}  // namespace qrnn
