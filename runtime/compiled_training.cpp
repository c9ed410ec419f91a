#include "runtime/compiled_training.h"

#include <map>

#include "core/attention.h"
#include "core/error.h"
#include "runtime/compiled_layer.h"
#include "runtime/kernel.h"

namespace qrnn {
namespace {
int64_t round_up(int64_t v, int multiple) { return (v + multiple - 1) / multiple * multiple; }
}  // namespace

std::vector<int64_t> padded_tape_shape(int64_t rows, int64_t T, int64_t B, int64_t m, const TapePadding &padding) {
    return {rows, round_up(T, padding.t), B, round_up(m, padding.h)};
}

Halide::Buffer<float> tape_gates_view(const LayerTapeData &tape, int64_t T, int64_t m) {
    Halide::Buffer<float> gates = halide_view(tape.gates);
    gates.crop(0, 0, static_cast<int>(m));
    gates.crop(2, 0, static_cast<int>(T));
    return gates;
}

Halide::Realization gradient_outputs(LayerGradsF &grads) {
    std::vector<Halide::Buffer<>> outputs{halide_view(grads.dweights), halide_view(grads.dbias), halide_view(grads.dx),
                                          halide_view(grads.dhistory), halide_view(grads.dc0)};
    return Halide::Realization(outputs);
}

std::string TrainingLayerOptions::key() const {
    return std::string(batch_bias ? "+batch_bias" : "") + (gate_grads ? "+gate_grads" : "") +
           (cell_output ? "+cell_output" : "") + (precision == Precision::f32 ? "" : std::string("+") + precision_name(precision));
}

static void require(bool given, bool wanted, const char *what) {
    if (given != wanted)
        fail("layer pipeline: ", what, wanted ? " missing (the layer was built with it)" : " given to a layer built without it");
}

CompiledTrainingLayer::CompiledTrainingLayer(const PoolingVariant &pooling, const std::string &schedule, const Knobs &knobs,
                                             const Halide::Target &target, const TrainingLayerOptions &options)
    : options_(options), variant_(&pooling) {
    variant_->require_backward();
    if (options.precision == Precision::int8) fail("int8 is for inference: no training pipeline (docs/int8.md)");
    if (options.cell_output) variant_ = &cell_output_variant(*variant_);
    forward_inputs_.with_batch_bias = backward_inputs_.fwd.with_batch_bias = options.batch_bias;
    forward_inputs_.precision = backward_inputs_.fwd.precision = options.precision;
    backward_inputs_.with_gate_grads = options.gate_grads;
    const TrainingSchedule &s = find_training_schedule(schedule);
    if (target.has_gpu_feature() || s.target_family != "cpu")
        fail("training runs on CPU targets only so far (schedule '", schedule, "', target ", target.to_string(), ")");
    check_precision(options.precision, target);
    Knobs merged = merge_knobs(s, knobs, target);
    if (s.tape_padding) padding_ = s.tape_padding(target, merged);
    forward_ = build_training_forward(s, forward_inputs_, *variant_, target, merged);
    backward_ = build_training_backward(s, backward_inputs_, *variant_, target, merged);
    compile_kernels({&forward_, &backward_}, target);
}

// batch_bias [G][B][m] of a call, bound to `in` (whose with_batch_bias matches `given`).
static void bind_batch_bias(LayerInputs &in, const Tensor<float> *batch_bias, const LayerCall &call, int64_t G) {
    require(batch_bias != nullptr, in.with_batch_bias, "batch_bias");
    if (!batch_bias) return;
    const int64_t B = call.x->dim(1), m = call.params->weights.dim(3);
    if (batch_bias->shape != std::vector<int64_t>{G, B, m})
        fail("layer pipeline: batch_bias ", batch_bias->shape_str(), " must be [", G, "][", B, "][", m, "]");
    in.batch_bias.set(halide_view(*batch_bias));
}

void CompiledTrainingLayer::forward(const LayerCall &call, LayerTapeData &tape, const Tensor<float> *batch_bias) {
    check_layer_call(call, *variant_);
    const int64_t T = call.x->dim(0), B = call.x->dim(1), m = call.params->weights.dim(3);
    ensure_shape(tape.gates, padded_tape_shape(variant_->gate_count(), T, B, m, padding_));
    std::lock_guard<std::mutex> lock(mutex_);
    bind_layer_inputs(forward_inputs_, call, false);
    bind_batch_bias(forward_inputs_, batch_bias, call, variant_->gate_count());
    std::vector<Halide::Buffer<>> outputs{halide_view(*call.c), call_output(call), halide_view(tape.gates)};
    Halide::Realization realization(outputs);
    forward_.realize(realization);
}

void CompiledTrainingLayer::backward(const LayerCall &call, const LayerTapeData &tape, const Tensor<float> &dh,
                                     const Tensor<float> &dc_final, LayerGradsF &grads, const Tensor<float> *dgates) {
    check_layer_call(call, *variant_);
    const int64_t T = call.x->dim(0), B = call.x->dim(1), n = call.x->dim(2);
    const auto &w = call.params->weights;
    const int64_t G = w.dim(0), k = w.dim(1), m = w.dim(3);
    if (dh.shape != std::vector<int64_t>{T, B, m} || dc_final.shape != std::vector<int64_t>{B, m})
        fail("layer backward: dh ", dh.shape_str(), " and dc_final ", dc_final.shape_str(), " must be [", T, "][", B,
             "][", m, "] and [", B, "][", m, "]");
    if (tape.gates.shape.size() != 4 || tape.gates.dim(1) < T || tape.gates.dim(3) < m || tape.gates.dim(2) != B)
        fail("layer backward: the tape ", tape.gates.shape_str(), " is not of this call's forward");
    ensure_shape(grads.dx, {T, B, n});
    ensure_shape(grads.dhistory, call.state->history.shape);
    ensure_shape(grads.dc0, {B, m});
    ensure_shape(grads.dweights, {G, k, n, m});
    ensure_shape(grads.dbias, {G, m});
    require(dgates != nullptr, options_.gate_grads, "dgates");
    if (dgates && dgates->shape != std::vector<int64_t>{G, T, B, m})
        fail("layer backward: dgates ", dgates->shape_str(), " must be [", G, "][", T, "][", B, "][", m, "]");
    if (options_.batch_bias) ensure_shape(grads.dbatch_bias, {G, B, m});

    std::lock_guard<std::mutex> lock(mutex_);
    bind_layer_inputs(backward_inputs_.fwd, call, false);
    // (The backward reads no batch_bias: only the forward's input_padded, not its conv.)
    if (dgates) backward_inputs_.dgates.set(halide_view(*dgates));
    backward_inputs_.gates.set(tape_gates_view(tape, T, m));
    backward_inputs_.cell.set(halide_view(*call.c));
    backward_inputs_.dh.set(call.dh_view.defined() ? call.dh_view : halide_view(dh));
    backward_inputs_.dc_final.set(halide_view(dc_final));
    std::vector<Halide::Buffer<>> outputs{halide_view(grads.dweights), halide_view(grads.dbias), halide_view(grads.dx),
                                          halide_view(grads.dhistory), halide_view(grads.dc0)};
    if (options_.batch_bias) outputs.push_back(halide_view(grads.dbatch_bias));
    Halide::Realization realization(outputs);
    backward_.realize(realization);
}

std::shared_ptr<CompiledTrainingLayer> compiled_training_layer(const PoolingVariant &pooling, const std::string &schedule,
                                                               const Knobs &knobs, const Halide::Target &t,
                                                               const TrainingLayerOptions &options, int64_t width) {
    // Keyed by the knobs it runs with: defaults given or left out, one pipeline.
    const Knobs run = merge_knobs_for_width(find_training_schedule(schedule), knobs, width, t);
    std::string key = pooling.name + options.key() + "|" + schedule + "|" + t.to_string() + knobs_key(run);
    return pipeline_cache().get<CompiledTrainingLayer>(
        key, [&] { return std::make_shared<CompiledTrainingLayer>(pooling, schedule, run, t, options); });
}

}  // namespace qrnn
