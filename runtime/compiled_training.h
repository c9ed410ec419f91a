// The training pipelines of one layer (schedules/training_schedule.h), JIT-compiled once for a target: the
// forward that saves its tape and the backward. Shape-generic, CPU targets.
#pragma once
#include <memory>
#include <mutex>

#include "runtime/kernel.h"
#include "runtime/compiled_layer.h"
#include "schedules/training_schedule.h"

namespace qrnn {

// What the forward saved: the activated gates (zoneout applied), over a padded extent (TapePadding).
struct LayerTapeData {
    Tensor<float> gates;  // [G][T_pad][B][m_pad]; the [0, T) x [0, m) part is used
};

// Float gradients of one layer (shapes of reference/qrnn_backward.h's LayerGrads).
struct LayerGradsF {
    Tensor<float> dx, dhistory, dc0, dweights, dbias;
    Tensor<float> dbatch_bias;  // [G][B][m], with TrainingLayerOptions::batch_bias only
};

// The encoder-decoder's decoder layers (nn/encoder_decoder.h); all off: the plain layer, the same pipelines.
struct TrainingLayerOptions {
    bool batch_bias = false;   // forward input batch_bias [G][B][m] added to the conv; backward gives its gradient
    bool gate_grads = false;   // backward input dgates [G][T][B][m]: a gradient of the activated gates from outside
    bool cell_output = false;  // run the pooling's cell_output_variant (h = c), core/attention.h
    Precision precision = Precision::f32;  // of the GEMMs' operands, forward and backward (core/precision.h)
    std::string key() const;
};

// Shape of a tape of `rows` gates over T steps, B, m, padded as the schedule's TapePadding asks.
std::vector<int64_t> padded_tape_shape(int64_t rows, int64_t T, int64_t B, int64_t m, const TapePadding &padding);
// The used [0, m) x [0, T) part of a padded tape of gates, as a backward pipeline's input.
Halide::Buffer<float> tape_gates_view(const LayerTapeData &tape, int64_t T, int64_t m);
// A backward pipeline's outputs, in BackwardFuncs::outputs() order: dweights, dbias, dx, dhistory, dc0.
Halide::Realization gradient_outputs(LayerGradsF &grads);

class CompiledTrainingLayer {
public:
    CompiledTrainingLayer(const PoolingVariant &pooling, const std::string &schedule, const Knobs &knobs = {},
                          const Halide::Target &target = Halide::get_jit_target_from_environment(),
                          const TrainingLayerOptions &options = {});
    // The forward of CompiledLayer::run (h and c written) that also fills the tape. batch_bias [G][B][m]: given
    // exactly when the options ask for it.
    void forward(const LayerCall &call, LayerTapeData &tape, const Tensor<float> *batch_bias = nullptr);
    // From the call of the forward (its x, state, params, masks, time and the c it wrote), its tape, dh
    // [T][B][m] and dc_final [B][m]: every gradient of the layer (resized as needed). dgates [G][T][B][m]:
    // given exactly when the options ask for it.
    void backward(const LayerCall &call, const LayerTapeData &tape, const Tensor<float> &dh, const Tensor<float> &dc_final,
                  LayerGradsF &grads, const Tensor<float> *dgates = nullptr);
    const PoolingVariant &variant() const { return *variant_; }
    const TrainingLayerOptions &options() const { return options_; }

private:
    TrainingLayerOptions options_;
    const PoolingVariant *variant_;
    TapePadding padding_;
    LayerInputs forward_inputs_;
    BackwardInputs backward_inputs_;
    Kernel forward_, backward_;
    std::mutex mutex_;
};

// Cached by (pooling, schedule, knobs run, target) for the life of the process.
// width: the layer's m, whose knobs the schedule may choose (merge_knobs_for_width: tiles that pad an odd m the
// least), `knobs` over them; 0: the target's.
std::shared_ptr<CompiledTrainingLayer> compiled_training_layer(const PoolingVariant &pooling, const std::string &schedule,
                                                               const Knobs &knobs = {},
                                                               const Halide::Target &target = Halide::get_jit_target_from_environment(),
                                                               const TrainingLayerOptions &options = {}, int64_t width = 0);

}  // namespace qrnn
