// The QRNN layer algorithm: masked convolution -> gate activations -> (zoneout) -> pooling scan.
// Only Funcs are defined here; schedules live in schedules/. Layout: core/layout.h.
#pragma once
#include <Halide.h>

#include "core/masked_conv.h"
#include "core/pooling.h"

namespace qrnn {

// Pipeline inputs of one layer. Training masks are off when their threshold is 0.
struct LayerInputs {
    Halide::ImageParam x{Halide::Float(32), 3, "x"};              // (n, B, T)
    Halide::ImageParam history{Halide::Float(32), 3, "history"};  // (n, B, max(k-1, 1))
    Halide::ImageParam weights{Halide::Float(32), 4, "weights"};  // (m, n, k, G)
    Halide::ImageParam bias{Halide::Float(32), 2, "bias"};        // (m, G)
    Halide::ImageParam c0{Halide::Float(32), 2, "c0"};            // (m, B)
    Halide::Param<int> time_offset{"time_offset", 0};           // absolute time of x's first step
    Halide::Param<uint32_t> dropout_key{"dropout_key", 0};
    Halide::Param<uint32_t> dropout_threshold{"dropout_threshold", 0};
    Halide::Param<float> dropout_scale{"dropout_scale", 1.0f};
    Halide::Param<uint32_t> zoneout_key{"zoneout_key", 0};
    Halide::Param<uint32_t> zoneout_threshold{"zoneout_threshold", 0};
    // The encoder-decoder's conditioning (runtime/encdec_config.h): a per-sequence bias (m, B, G) added to the
    // conv. Part of the pipeline only when set: the plain layer's arguments and code do not change.
    bool with_batch_bias = false;
    Halide::ImageParam batch_bias{Halide::Float(32), 3, "batch_bias"};
    // The conv's operands (core/precision.h): bf16 changes the algorithm, not the arguments; int8 reads the
    // quantized weights below instead of `weights` (runtime/int8_params.h).
    Precision precision = Precision::f32;
    Halide::ImageParam weights_int8{Halide::Int(8), 4, "weights_int8"};   // (m, n, k, G)
    Halide::ImageParam weight_sums{Halide::Int(32), 2, "weight_sums"};    // (m, G)
    Halide::ImageParam dequantize{Halide::Float(32), 2, "dequantize"};    // (m, G)
    Halide::Param<float> input_inverse_scale{"input_inverse_scale", 1.0f};

    // The pipeline arguments in order (ahead-of-time compiled functions take them so). Every input is listed
    // here and in set_estimates, nowhere else.
    std::vector<Halide::Argument> arguments() const {
        std::vector<Halide::Argument> args{x, history, weights, bias, c0, time_offset, dropout_key, dropout_threshold,
                                           dropout_scale, zoneout_key, zoneout_threshold};
        if (precision == Precision::int8) {  // the quantized weights in place of the weights
            args[2] = weights_int8;
            args.insert(args.begin() + 3, {weight_sums, dequantize, input_inverse_scale});
        }
        if (with_batch_bias) args.push_back(batch_bias);
        return args;
    }
    // Estimates of every input for a shape (autoschedulers): extents of the buffers, masks off. Parameters are
    // handles, so this sets the estimates of the pipeline's own.
    void set_estimates(int T, int B, int n, int m, int k, int G) const;
};

// Every stage of the layer, by name, for schedules to reach. The masked conv's (ConvFuncs: c, h, b, t, g,
// input_padded = history ++ x with dropout applied, weights_clamped, conv, conv_r) come first.
struct LayerFuncs : ConvFuncs {
    Halide::Func gates{"gates"};                  // (h, b, t, g) activated gates, zoneout applied to F
    Halide::Func cell{"cell"};                    // (h, b, t) -> {c_t, h_t}: the output; scan over t
    Halide::RDom scan_r;                          // t in [1, T) of cell's update(1)
    Halide::Expr T, B, n, m, k;                   // extents, from the inputs
    const PoolingVariant *variant = nullptr;

    // The pipeline's outputs, in order: cell's (c_t, h_t); with the tape (a training forward) also gates, what
    // the backward reads. Every layer pipeline returns these (schedules/schedule.h).
    std::vector<Halide::Func> outputs(bool with_tape = false) const {
        if (with_tape) return {cell, gates};
        return {cell};
    }
    int gate_rows = 0;  // g extent of conv/gates when not the variant's gate count (bidirectional: 2G)
    int gate_extent() const { return gate_rows ? gate_rows : variant->gate_count(); }
};

// conv_h_tile > 0: the schedule's h tile: the conv reads the weights packed into panels of that many rows
// (ConvFuncs::weights_packed).
LayerFuncs define_qrnn_layer(const LayerInputs &in, const PoolingVariant &variant, int conv_h_tile = 0);
// L's extents from the inputs: n, B, T from x; m, k from the weights (every layer algorithm's first step).
void set_layer_extents(LayerFuncs &L, const LayerInputs &in);
// The int8 conv's parameters of the inputs (precision int8; not with a batch bias: throws qrnn::Error).
Int8ConvInputs int8_conv_inputs(const LayerInputs &in);

// The training masks (core/layout.h), shared by the forward and the backward: keep(t_abs, b, channel).
Halide::Expr keep_mask(const Halide::Expr &key, const Halide::Expr &threshold, const Halide::Expr &t_abs,
                       const Halide::Expr &b, const Halide::Expr &ch);
// Inverted dropout of the input (c, b) at absolute time t_abs: v itself when dropout is off. Linear in v, so
// it also maps a gradient of the dropped input back to the input.
Halide::Expr apply_dropout(const LayerInputs &in, const Halide::Expr &v, const Halide::Expr &t_abs,
                           const Halide::Expr &b, const Halide::Expr &c);

}  // namespace qrnn
