// Double reference of the encoder-decoder QRNN with attention (runtime/encdec_config.h has the equations):
// forward and the backward of every parameter, the source and the target, from zero initial states.
// Checked against central finite differences in tests/test_encdec_reference.cpp.
#pragma once
#include "reference/attention.h"
#include "reference/qrnn_backward.h"
#include "runtime/encdec_config.h"

namespace qrnn::ref {

// The conditioning (core/condition.h): bias[g][b][h] = sum_c V[g][c][h] last[b][c]; from dbias [G][B][m]:
// dV[g][c][h] = sum_b dbias[g][b][h] last[b][c], dlast[b][c] = sum_{g,h} V[g][c][h] dbias[g][b][h].
Tensor<double> condition_bias(const Tensor<double> &V, const Tensor<double> &last);
struct ConditionGrads {
    Tensor<double> dV, dlast;
};
ConditionGrads condition_backward(const Tensor<double> &V, const Tensor<double> &last, const Tensor<double> &dbias);

struct EncDecTrace {
    std::vector<LayerTrace> encoder, decoder;    // per layer (the last decoder layer: h = c with attention)
    std::vector<Tensor<double>> final_state;     // h~^l [B][m]: encoder layer l at each sequence's last step
    std::vector<Tensor<double>> batch_bias;      // V_l h~^l as [G][B][m]
    Tensor<double> gate_o;                       // [T][B][m] o of the last decoder layer (ones for pooling f)
    AttentionTrace attention;                    // empty without attention
    Tensor<double> out;                          // [T][B][m] the model's output
};
EncDecTrace encdec_forward(const EncDecConfig &cfg, const EncDecParams<double> &p, const Tensor<double> &source,
                           const std::vector<int64_t> &lengths, const Tensor<double> &target);

struct EncDecGrads {
    Tensor<double> dsource, dtarget;
    EncDecParams<double> params;  // gradients, shaped as the parameters
};
// Gradients of L = sum(dout * out).
EncDecGrads encdec_backward(const EncDecConfig &cfg, const EncDecParams<double> &p, const Tensor<double> &source,
                            const std::vector<int64_t> &lengths, const Tensor<double> &target, const Tensor<double> &dout);

}  // namespace qrnn::ref
