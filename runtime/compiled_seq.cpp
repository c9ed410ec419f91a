#include "runtime/compiled_seq.h"

#include <map>

#include "core/error.h"
#include "runtime/compiled_layer.h"
#include "runtime/kernel.h"

namespace qrnn {
namespace {
void require_shape(const char *what, const Tensor<float> &t, std::vector<int64_t> want) {
    if (t.shape != want) {
        Tensor<float> w;
        w.shape = std::move(want);
        fail("variable-length/bidirectional layer: ", what, " has shape ", t.shape_str(), ", expected ", w.shape_str());
    }
}
}  // namespace

void check_seq_call(const SeqCall &call, const PoolingVariant &variant, const SeqOptions &options) {
    const Tensor<float> &x = *call.x;
    if (x.shape.size() != 3) fail("variable-length/bidirectional layer: input must be [T][B][n], got ", x.shape_str());
    const int64_t T = x.dim(0), B = x.dim(1), n = x.dim(2), D = options.directions;
    const auto &w = call.params->weights;
    if (w.shape.size() != 4 || w.dim(0) != D * variant.gate_count())
        fail("variable-length/bidirectional layer: weights ", w.shape_str(), " must be [", D * variant.gate_count(), "][k][n][m]");
    const int64_t k = w.dim(1), m = w.dim(3);
    require_shape("weights", w, {D * variant.gate_count(), k, n, m});
    require_shape("bias", call.params->bias, {D * variant.gate_count(), m});
    require_shape("history", call.state->history, {std::max<int64_t>(k - 1, 1), B, n});
    require_shape("c0", call.state->c, {B, m});
    require_shape("y output", *call.y, {T, B, m * options.out_width_factor()});
    require_shape("cells output", *call.cells, {D, T, B, m});
    if (static_cast<int64_t>(call.lengths->size()) != B)
        fail("lengths has ", call.lengths->size(), " entries, the batch has ", B, " sequences");
    for (int64_t b = 0; b < B; b++) {
        const int32_t len = (*call.lengths)[b];
        if (len < 1 || len > T) fail("lengths[", b, "] = ", len, " is outside [1, T] (T = ", T, ")");
    }
}

CompiledSeqLayer::CompiledSeqLayer(const PoolingVariant &pooling, const SeqOptions &options, const std::string &schedule,
                                   const Halide::Target &asked_target, const Knobs &knobs, Precision precision)
    : variant_(&pooling), options_(options) {
    const bool int8 = precision == Precision::int8;
    const Halide::Target target = int8 ? int8_kernel_target(asked_target) : asked_target;
    if (int8 && schedule != "tuned") fail("schedule '", schedule, "' has no int8 conv (precision int8 runs with schedule 'tuned')");
    check_precision(precision, target);
    forward_inputs_.layer.precision = backward_inputs_.fwd.layer.precision = precision;
    variant_->require_backward();
    if (options.directions != 1 && options.directions != 2) fail("directions must be 1 or 2 (got ", options.directions, ")");
    const SeqSchedule &s = find_seq_schedule(schedule);
    if (target.has_gpu_feature() || s.target_family != "cpu")
        fail("the variable-length/bidirectional layer runs on CPU targets only (schedule '", schedule, "', target ",
             target.to_string(), ")");
    if (s.tape_padding) padding_ = s.tape_padding(target, knobs);
    forward_ = build_seq_forward(s, forward_inputs_, *variant_, options, target, knobs);
    if (int8) {  // inference only
        compile_kernels({&forward_}, target);
        return;
    }
    backward_ = build_seq_backward(s, backward_inputs_, *variant_, options, target, knobs);
    compile_kernels({&forward_, &backward_}, target);
}

void CompiledSeqLayer::bind(LayerInputs &layer, Halide::ImageParam &lengths, const SeqCall &call) {
    Tensor<float> h_shape;
    LayerCall plain{call.x, call.state, call.params, call.masks, call.time_offset, &h_shape, &h_shape};
    plain.int8 = call.int8;
    bind_layer_inputs(layer, plain, false);
    lengths.set(Halide::Buffer<int32_t>(const_cast<int32_t *>(call.lengths->data()), static_cast<int>(call.lengths->size())));
}

void CompiledSeqLayer::forward(const SeqCall &call, LayerTapeData &tape) {
    check_seq_call(call, *variant_, options_);
    const int64_t T = call.x->dim(0), B = call.x->dim(1), m = call.params->weights.dim(3);
    ensure_shape(tape.gates, padded_tape_shape(options_.directions * variant_->gate_count(), T, B, m, padding_));
    std::lock_guard<std::mutex> lock(mutex_);
    bind(forward_inputs_.layer, forward_inputs_.lengths, call);
    // The scans write in place (SeqFuncs::outputs): c into its direction's slice of the cells, h into the output.
    float *cells = call.cells->data.data(), *y = call.y->data.data();
    auto cells_of = [&](int64_t d) { return channel_slice(cells + d * T * B * m, T, B, m, 0, m); };
    std::vector<Halide::Buffer<>> outputs{cells_of(0)};
    if (options_.directions == 1) outputs.push_back(halide_view(*call.y));
    else if (options_.sum) outputs.insert(outputs.end(), {cells_of(1), halide_view(*call.y)});
    else outputs.insert(outputs.end(), {channel_slice(y, T, B, 2 * m, 0, m), cells_of(1), channel_slice(y, T, B, 2 * m, m, m)});
    outputs.push_back(halide_view(tape.gates));
    Halide::Realization realization(outputs);
    forward_.realize(realization);
}

void CompiledSeqLayer::backward(const SeqCall &call, const LayerTapeData &tape, const Tensor<float> &dy,
                                const Tensor<float> &dc_final, LayerGradsF &grads) {
    check_seq_call(call, *variant_, options_);
    if (forward_inputs_.layer.precision == Precision::int8) fail("int8 is for inference: the layer has no backward");
    const int64_t T = call.x->dim(0), B = call.x->dim(1), n = call.x->dim(2);
    const auto &w = call.params->weights;
    const int64_t GD = w.dim(0), k = w.dim(1), m = w.dim(3);
    require_shape("dy", dy, call.y->shape);
    require_shape("dc_final", dc_final, {options_.directions, B, m});
    ensure_shape(grads.dx, {T, B, n});
    ensure_shape(grads.dhistory, call.state->history.shape);
    ensure_shape(grads.dc0, {B, m});
    ensure_shape(grads.dweights, {GD, k, n, m});
    ensure_shape(grads.dbias, {GD, m});
    std::lock_guard<std::mutex> lock(mutex_);
    bind(backward_inputs_.fwd.layer, backward_inputs_.fwd.lengths, call);
    backward_inputs_.gates.set(tape_gates_view(tape, T, m));
    backward_inputs_.cells.set(halide_view(*call.cells));
    backward_inputs_.dy.set(halide_view(dy));
    backward_inputs_.dc_final.set(halide_view(dc_final));
    Halide::Realization realization = gradient_outputs(grads);
    backward_.realize(realization);
}

std::shared_ptr<CompiledSeqLayer> compiled_seq_layer(const PoolingVariant &pooling, const SeqOptions &options,
                                                     const std::string &schedule, int64_t m, const Halide::Target &t,
                                                     Precision precision) {
    const Knobs knobs = seq_schedule_knobs(find_seq_schedule(schedule), m, t);
    std::string key = pooling.name + "|" + std::to_string(options.directions) + (options.sum ? "sum" : "cat") + "|" + schedule +
                      "|" + t.to_string() + knobs_key(knobs) + "|" + precision_name(precision);
    return pipeline_cache().get<CompiledSeqLayer>(
        key, [&] { return std::make_shared<CompiledSeqLayer>(pooling, options, schedule, t, knobs, precision); });
}

}  // namespace qrnn
