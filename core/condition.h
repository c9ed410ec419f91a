// The decoder's conditioning on the encoder (runtime/encdec_config.h): each decoder layer l's conv output gets
// + V_l h~^l at every t, h~^l the matching encoder layer's last state. As Halide Funcs (GEMMs over c); only Funcs,
// schedules in schedules/condition_schedule.cpp. Layouts (row-major; Halide names innermost first):
//   V     [G][m][m]  V(h, c, g)      one m x m matrix per gate g
//   last  [B][m]     last(c, b)      h~ of each sequence
//   bias  [G][B][m]  bias(h, b, g)   sum_c V[g][c][h] last[b][c] (the decoder layer's batch_bias input)
//   dbias [G][B][m]  dbias(h, b, g)  dL/dbias (the decoder layer's dbatch_bias: its pre-activation grads summed over t)
#pragma once
#include <Halide.h>

namespace qrnn {

struct ConditionInputs {
    Halide::ImageParam V{Halide::Float(32), 3, "cond_v"};
    Halide::ImageParam last{Halide::Float(32), 2, "cond_last"};
    std::vector<Halide::Argument> arguments() const { return {V, last}; }
};

struct ConditionFuncs {
    Halide::Var h{"h"}, b{"b"}, g{"g"};
    Halide::Expr m, B, G;
    Halide::RDom hidden_r;                   // c
    Halide::Func bias_acc{"cond_bias_acc"};  // (h, b, g) accumulated over hidden_r
    Halide::Func bias{"cond_bias"};          // (h, b, g) output
};
ConditionFuncs define_condition(const ConditionInputs &in);

struct ConditionBackwardInputs {
    ConditionInputs fwd;
    Halide::ImageParam dbias{Halide::Float(32), 3, "cond_dbias"};
    std::vector<Halide::Argument> arguments() const { return {fwd.V, fwd.last, dbias}; }
};

struct ConditionBackwardFuncs {
    Halide::Var h{"h"}, c{"c"}, b{"b"}, g{"g"};
    Halide::Expr m, B, G;
    Halide::RDom batch_r;                    // b
    Halide::RDom rows_r;                     // (h, g)
    Halide::Func dV_acc{"cond_dv_acc"};      // (h, c, g) sum_b dbias[g][b][h] last[b][c]
    Halide::Func dV{"cond_dv"};              // (h, c, g) output
    Halide::Func V_t{"cond_v_t"};            // (c, h, g) = V(h, c, g)
    Halide::Func dlast_acc{"cond_dlast_acc"};  // (c, b) sum_{g,h} V[g][c][h] dbias[g][b][h]
    Halide::Func dlast{"cond_dlast"};        // (c, b) output
    std::vector<Halide::Func> outputs() const { return {dV, dlast}; }
};
ConditionBackwardFuncs define_condition_backward(const ConditionBackwardInputs &in);

}  // namespace qrnn
