#include "schedules/condition_schedule.h"

#include "schedules/cpu_common.h"
#include "schedules/gemm_core.h"

namespace qrnn {
namespace {
using namespace Halide;

// CUDA: f at root, each stage one thread per (x, y) in 32-wide rows of x, y and `z` in blocks.
void gpu_at_root(Func f, const Var &x, const Var &y, const Var &z) {
    Var xo("xo"), xi("xi");
    f.compute_root();
    for (int u = -1; u < f.num_update_definitions(); u++) {
        Stage s = u < 0 ? Stage(f) : f.update(u);
        s.split(x, xo, xi, 32, TailStrategy::GuardWithIf).gpu_threads(xi);
        if (z.same_as(y))
            s.gpu_blocks(xo, y);
        else
            s.gpu_blocks(xo, y, z);
    }
}
}  // namespace

Pipeline build_condition_forward(const ConditionInputs &in, const Target &target) {
    ConditionFuncs F = define_condition(in);
    if (!target.has_gpu_feature()) {
        GemmDims dims{F.bias_acc, F.h, F.b, {}, {F.g}, {F.hidden_r}, F.B, 1, F.m};
        dims.in_place = true;
        schedule_gemm(F.bias, dims, F.m, gemm_blocking(target, gemm_tile_for(target)));
    } else {
        gpu_at_root(F.bias_acc, F.h, F.b, F.g);
        gpu_at_root(F.bias, F.h, F.b, F.g);
    }
    return Pipeline(F.bias);
}

Pipeline build_condition_backward(const ConditionBackwardInputs &in, const Target &target) {
    ConditionBackwardFuncs D = define_condition_backward(in);
    const Var h = D.h, c = D.c, b = D.b, g = D.g;
    if (!target.has_gpu_feature()) {
        const GemmBlocking blocking = gemm_blocking(target, gemm_tile_for(target));
        GemmDims dv{D.dV_acc, h, c, {}, {g}, {D.batch_r}, D.m, 1, D.B};
        dv.in_place = true;
        schedule_gemm(D.dV, dv, D.m, blocking);
        cpu_block_transpose(D.V_t, in.fwd.V, c, h, D.m, D.m, g);
        GemmDims dlast{D.dlast_acc, c, b, {}, {}, {D.rows_r.x, D.rows_r.y}, D.B, 1, D.rows_r.x.extent() * D.rows_r.y.extent()};
        dlast.in_place = true;
        schedule_gemm(D.dlast, dlast, D.m, blocking);
    } else {
        gpu_at_root(D.dV_acc, h, c, g);
        gpu_at_root(D.dV, h, c, g);
        gpu_at_root(D.V_t, c, h, g);
        gpu_at_root(D.dlast_acc, c, b, b);
        gpu_at_root(D.dlast, c, b, b);
    }
    return Pipeline(D.outputs());
}

}  // namespace qrnn
