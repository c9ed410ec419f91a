#include "schedules/softmax_schedule.h"

namespace qrnn {
using namespace Halide;

void schedule_softmax_decoder_cuda(DecoderFuncs &F, const Target &) {
    Var k = F.k, n = F.n, v = F.v;
    Var ko("ko"), ki("ki"), no("no"), ni("ni"), vo("vo"), vi("vi");
    const int threads = 32, rows = 8;
    // Element-wise and GEMM-shaped stages: one thread per output, the reduction in its registers.
    F.logits.compute_root().gpu_tile(n, v, no, vo, ni, vi, threads, rows, TailStrategy::RoundUp);
    F.logits.update().gpu_tile(n, v, no, vo, ni, vi, threads, rows, TailStrategy::RoundUp).reorder(F.logits_r.x, ni, vi, no, vo);
    for (Func f : {F.row_max, F.row_sum}) {
        f.compute_root().gpu_tile(n, no, ni, threads, TailStrategy::RoundUp);
        f.update().gpu_tile(n, no, ni, threads, TailStrategy::RoundUp).reorder(F.vocab_r.x, ni, no);
    }
    F.log_norm.compute_root().gpu_tile(n, no, ni, threads, TailStrategy::RoundUp);
    F.row_loss.gpu_tile(n, no, ni, threads, TailStrategy::GuardWithIf);
    F.dlogits.compute_root().gpu_tile(n, v, no, vo, ni, vi, threads, rows, TailStrategy::RoundUp);

    F.dhidden.gpu_tile(k, n, ko, no, ki, ni, threads, rows, TailStrategy::GuardWithIf);
    F.dhidden_sum.compute_at(F.dhidden, ki);
    F.dhidden_part.compute_at(F.dhidden_sum, F.blocks_r.x);
    F.dweights.gpu_tile(k, v, ko, vo, ki, vi, threads, rows, TailStrategy::GuardWithIf);
    F.dweights_acc.compute_at(F.dweights, ki);
    F.dbias.gpu_tile(v, vo, vi, threads, TailStrategy::GuardWithIf);
    F.dbias_acc.compute_at(F.dbias, vi);
    F.dbias_lanes.compute_at(F.dbias, vi);
}

}  // namespace qrnn
