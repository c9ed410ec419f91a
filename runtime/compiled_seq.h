// The variable-length / bidirectional layer's pipelines (schedules/seq_schedule.h), JIT-compiled once per
// (pooling, directions, sum, schedule, target, the schedule's knobs for the width): forward (output, cells, gates
// tape) and backward. CPU targets.
#pragma once
#include <memory>
#include <mutex>

#include "runtime/kernel.h"
#include "runtime/compiled_training.h"
#include "runtime/int8_params.h"
#include "schedules/seq_schedule.h"

namespace qrnn {

// One call: x [T][B][n], lengths [B] in [1, T], the forward direction's state (history, c0), params
// (weights [D*G][k][n][m], bias [D*G][m]); writes y [T][B][m * out_width_factor] and cells [D][T][B][m].
struct SeqCall {
    const Tensor<float> *x;
    const std::vector<int32_t> *lengths;
    const LayerState<float> *state;
    const LayerParams<float> *params;
    LayerMasks masks;
    int64_t time_offset = 0;
    Tensor<float> *y, *cells;
    const Int8LayerParams *int8 = nullptr;  // an int8 layer's (runtime/int8_params.h)
};

// Throws qrnn::Error "lengths[b] = v is outside [1, T]" (and the like) for a bad call.
void check_seq_call(const SeqCall &call, const PoolingVariant &variant, const SeqOptions &options);

class CompiledSeqLayer {
public:
    // int8 (docs/int8.md): the forward only, schedule "tuned", on int8_kernel_target(target). bf16: the forward's
    // conv and the backward's GEMMs over pairs of bf16 operands, as the plain layer's (docs/precision.md).
    CompiledSeqLayer(const PoolingVariant &pooling, const SeqOptions &options, const std::string &schedule,
                     const Halide::Target &target, const Knobs &knobs, Precision precision = Precision::f32);
    void forward(const SeqCall &call, LayerTapeData &tape);
    // From the forward's call (its cells), its tape, dy (y's shape) and dc_final [D][B][m]: every gradient.
    void backward(const SeqCall &call, const LayerTapeData &tape, const Tensor<float> &dy, const Tensor<float> &dc_final,
                  LayerGradsF &grads);
    const PoolingVariant &variant() const { return *variant_; }
    const SeqOptions &options() const { return options_; }

private:
    void bind(LayerInputs &layer, Halide::ImageParam &lengths, const SeqCall &call);
    const PoolingVariant *variant_;
    SeqOptions options_;
    TapePadding padding_;
    SeqInputs forward_inputs_;
    SeqBackwardInputs backward_inputs_;
    Kernel forward_, backward_;
    std::mutex mutex_;
};

// Cached for the life of the process, built for layers of m units (seq_schedule_knobs: one pipeline per set of
// knobs, not per m).
std::shared_ptr<CompiledSeqLayer> compiled_seq_layer(const PoolingVariant &pooling, const SeqOptions &options,
                                                     const std::string &schedule, int64_t m,
                                                     const Halide::Target &target = Halide::get_jit_target_from_environment(),
                                                     Precision precision = Precision::f32);

}  // namespace qrnn
