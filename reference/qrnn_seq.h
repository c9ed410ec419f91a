// Double-precision reference of the variable-length / bidirectional QRNN layer (core/qrnn_seq.h defines the
// semantics): obvious loops, derivations in comments. The backward is checked against central finite
// differences in tests/test_seq_layer.cpp; with one direction and every length T it is the plain layer.
#pragma once
#include "core/qrnn_seq.h"
#include "reference/qrnn_backward.h"
#include "runtime/int8_params.h"

namespace qrnn::ref {

struct SeqTrace {
    Tensor<double> x, history;  // dropped; x zero past each sequence's end
    Tensor<double> gates;       // [T][B][D*G][m] activated, zoneout applied
    Tensor<double> cells;       // [D][T][B][m]
    Tensor<double> y;           // [T][B][m * out_width_factor]
};

// int8: the conv of ref::int8_masked_conv (reference/reference.h), the taps as in f32. bf16: the conv's operands
// rounded (the trace's x and history hold them rounded: what the backward's dW reads too).
SeqTrace seq_trace(const PoolingVariant &variant, const SeqOptions &options, const Tensor<double> &x,
                   const std::vector<int32_t> &lengths, const LayerState<double> &state, const LayerParams<double> &p,
                   const LayerMasks &masks, int64_t time_offset, const Int8LayerParams *int8 = nullptr,
                   Precision precision = Precision::f32);

// Gradients of loss = sum(dy * y) + sum(dc_final * final cells), dc_final [D][B][m]: the forward direction's
// c_{T-1} (= c at each sequence's end) and the reverse direction's c_0. bf16: dpre rounded where dW and dX read it,
// x and the weights as the forward rounds them; dbias from dpre unrounded.
LayerGrads seq_backward(const PoolingVariant &variant, const SeqOptions &options, const Tensor<double> &x,
                        const std::vector<int32_t> &lengths, const LayerState<double> &state, const LayerParams<double> &p,
                        const LayerMasks &masks, int64_t time_offset, const Tensor<double> &dy, const Tensor<double> &dc_final,
                        Precision precision = Precision::f32);

// The final states [D][B][m] of a trace (forward: c at T-1; reverse: c at 0).
Tensor<double> seq_final_cells(const SeqTrace &trace);

// A stack of such layers (layer l >= 1 reads layer l-1's output; masks layer_masks(cfg, l)) from `states`
// (one per layer, not advanced), in cfg.precision: the last layer's output, and with `dy` every gradient (zero
// final-state gradients; StackGrads::layers[l].dx is the gradient of layer l's input).
Tensor<double> seq_stack_forward(const ModelConfig &cfg, const SeqOptions &options, const std::vector<LayerParams<double>> &params,
                                 const Tensor<double> &x, const std::vector<int32_t> &lengths,
                                 const std::vector<LayerState<double>> &states, int64_t time_offset,
                                 const std::vector<const Int8LayerParams *> &int8 = {});
StackGrads seq_stack_backward(const ModelConfig &cfg, const SeqOptions &options, const std::vector<LayerParams<double>> &params,
                              const Tensor<double> &x, const std::vector<int32_t> &lengths,
                              const std::vector<LayerState<double>> &states, int64_t time_offset, const Tensor<double> &dy);

}  // namespace qrnn::ref
