#include "runtime/compiled_training.h"

#include <map>

#include "core/error.h"
#include "runtime/buffer_cache.h"

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

CompiledTrainingLayer::CompiledTrainingLayer(const std::string &pooling, const std::string &schedule, const Knobs &knobs,
                                             const Halide::Target &target)
    : variant_(&find_pooling(pooling)) {
    variant_->require_backward();
    const TrainingSchedule &s = find_training_schedule(schedule);
    if (target.has_gpu_feature() || s.target_family != "cpu")
        fail("training runs on CPU targets only so far (schedule '", schedule, "', target ", target.to_string(), ")");
    Knobs merged = merge_knobs(s, knobs, target);
    if (s.tape_padding) padding_ = s.tape_padding(target, merged);
    forward_ = build_training_forward(s, forward_inputs_, *variant_, target, merged);
    backward_ = build_training_backward(s, backward_inputs_, *variant_, target, merged);
    for (Halide::Pipeline *p : {&forward_, &backward_}) {
        use_buffer_cache(*p);
        p->compile_jit(target);
    }
}

void CompiledTrainingLayer::forward(const LayerCall &call, LayerTapeData &tape) {
    check_layer_call(call, *variant_);
    const int64_t T = call.x->dim(0), B = call.x->dim(1), m = call.params->weights.dim(3);
    ensure_shape(tape.gates, padded_tape_shape(variant_->gate_count(), T, B, m, padding_));
    std::lock_guard<std::mutex> lock(mutex_);
    bind_layer_inputs(forward_inputs_, call, false);
    std::vector<Halide::Buffer<>> outputs{halide_view(*call.c), call_output(call), halide_view(tape.gates)};
    Halide::Realization realization(outputs);
    forward_.realize(realization);
}

void CompiledTrainingLayer::backward(const LayerCall &call, const LayerTapeData &tape, const Tensor<float> &dh,
                                     const Tensor<float> &dc_final, LayerGradsF &grads) {
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

    std::lock_guard<std::mutex> lock(mutex_);
    bind_layer_inputs(backward_inputs_.fwd, call, false);
    backward_inputs_.gates.set(tape_gates_view(tape, T, m));
    backward_inputs_.cell.set(halide_view(*call.c));
    backward_inputs_.dh.set(halide_view(dh));
    backward_inputs_.dc_final.set(halide_view(dc_final));
    Halide::Realization realization = gradient_outputs(grads);
    backward_.realize(realization);
}

std::shared_ptr<CompiledTrainingLayer> compiled_training_layer(const std::string &pooling, const std::string &schedule,
                                                               const Knobs &knobs, const std::string &target) {
    static std::mutex mutex;
    static std::map<std::string, std::shared_ptr<CompiledTrainingLayer>> cache;
    Halide::Target t = parse_target(target);
    std::string key = pooling + "|" + schedule + "|" + t.to_string();
    for (auto &kv : knobs) key += "|" + kv.first + "=" + std::to_string(kv.second);
    std::lock_guard<std::mutex> lock(mutex);
    auto &slot = cache[key];
    if (!slot) slot = std::make_shared<CompiledTrainingLayer>(pooling, schedule, knobs, t);
    return slot;
}

}  // namespace qrnn
