#include "core/condition.h"

namespace qrnn {
using namespace Halide;

ConditionFuncs define_condition(const ConditionInputs &in) {
    ConditionFuncs F;
    Var h = F.h, b = F.b, g = F.g;
    F.m = in.V.dim(0).extent(), F.G = in.V.dim(2).extent(), F.B = in.last.dim(1).extent();
    F.hidden_r = RDom(0, F.m, "hidden_r");
    F.bias_acc(h, b, g) = 0.0f;
    F.bias_acc(h, b, g) += in.V(h, F.hidden_r, g) * in.last(F.hidden_r, b);
    F.bias(h, b, g) = F.bias_acc(h, b, g);
    return F;
}

// bias = V^T last per g: dV[g][c][h] = sum_b dbias[g][b][h] last[b][c], dlast[b][c] = sum_{g,h} V[g][c][h] dbias[g][b][h].
ConditionBackwardFuncs define_condition_backward(const ConditionBackwardInputs &in) {
    ConditionBackwardFuncs D;
    const ConditionInputs &f = in.fwd;
    Var h = D.h, c = D.c, b = D.b, g = D.g;
    D.m = f.V.dim(0).extent(), D.G = f.V.dim(2).extent(), D.B = f.last.dim(1).extent();
    D.batch_r = RDom(0, D.B, "batch_r");
    D.dV_acc(h, c, g) = 0.0f;
    D.dV_acc(h, c, g) += in.dbias(h, D.batch_r, g) * f.last(c, D.batch_r);
    D.dV(h, c, g) = D.dV_acc(h, c, g);
    D.V_t(c, h, g) = f.V(h, c, g);
    D.rows_r = RDom(0, D.m, 0, D.G, "rows_r");
    D.dlast_acc(c, b) = 0.0f;
    D.dlast_acc(c, b) += D.V_t(c, D.rows_r.x, D.rows_r.y) * in.dbias(D.rows_r.x, b, D.rows_r.y);
    D.dlast(c, b) = D.dlast_acc(c, b);
    return D;
}

}  // namespace qrnn
