#include "runtime/compiled_attention.h"

#include "core/error.h"
#include "runtime/compiled_layer.h"
#include "runtime/encdec_config.h"
#include "runtime/kernel.h"

namespace qrnn {

CompiledAttention::CompiledAttention(const Halide::Target &target) {
    if (target.has_gpu_feature()) fail("attention runs on CPU targets only so far (target ", target.to_string(), ")");
    forward_ = build_attention_forward(forward_inputs_, target);
    backward_ = build_attention_backward(backward_inputs_, target);
    compile_kernels({&forward_, &backward_}, target);
}

void CompiledAttention::bind(AttentionInputs &in, const Tensor<float> &cell, const Tensor<float> &gate_o,
                             const Tensor<float> &enc, const std::vector<int64_t> &lengths, const Tensor<float> &weights) {
    if (cell.shape.size() != 3 || gate_o.shape != cell.shape || enc.shape.size() != 3 || enc.dim(1) != cell.dim(1) ||
        enc.dim(2) != cell.dim(2))
        fail("attention: cell ", cell.shape_str(), ", gate_o ", gate_o.shape_str(), " and encoder outputs ",
             enc.shape_str(), " must be [T][B][m], [T][B][m] and [S][B][m]");
    const int64_t B = cell.dim(1), m = cell.dim(2);
    if (weights.shape != std::vector<int64_t>{2, m, m})
        fail("attention: weights ", weights.shape_str(), " must be [2][", m, "][", m, "]");
    check_source_lengths(lengths, B, enc.dim(0));
    lengths_ = Halide::Buffer<int32_t>(static_cast<int>(B));
    for (int64_t b = 0; b < B; b++) lengths_(static_cast<int>(b)) = static_cast<int32_t>(lengths[b]);
    in.cell.set(halide_view(cell));
    in.gate_o.set(halide_view(gate_o));
    in.enc.set(halide_view(enc));
    in.lengths.set(lengths_);
    in.weights.set(halide_view(weights));
}

void CompiledAttention::forward(const Tensor<float> &cell, const Tensor<float> &gate_o, const Tensor<float> &enc,
                                const std::vector<int64_t> &lengths, const Tensor<float> &weights, Tensor<float> &out,
                                AttentionTape &tape) {
    std::lock_guard<std::mutex> lock(mutex_);
    bind(forward_inputs_, cell, gate_o, enc, lengths, weights);
    const int64_t T = cell.dim(0), B = cell.dim(1), m = cell.dim(2), S = enc.dim(0);
    ensure_shape(out, {T, B, m});
    ensure_shape(tape.alpha, {B, T, S});
    ensure_shape(tape.context, {T, B, m});
    ensure_shape(tape.mixed, {T, B, m});
    ensure_shape(tape.enc_t, {B, m, S});
    // out and mixed as their T B rows (core/attention.h).
    std::vector<Halide::Buffer<>> outputs{halide_rows_view(out), halide_view(tape.alpha), halide_view(tape.context),
                                          halide_rows_view(tape.mixed), halide_view(tape.enc_t)};
    Halide::Realization realization(outputs);
    forward_.realize(realization);
}

void CompiledAttention::backward(const Tensor<float> &cell, const Tensor<float> &gate_o, const Tensor<float> &enc,
                                 const std::vector<int64_t> &lengths, const Tensor<float> &weights,
                                 const AttentionTape &tape, const Tensor<float> &dout, AttentionGradsF &grads) {
    std::lock_guard<std::mutex> lock(mutex_);
    bind(backward_inputs_.fwd, cell, gate_o, enc, lengths, weights);
    if (dout.shape != cell.shape || tape.alpha.shape != std::vector<int64_t>{cell.dim(1), cell.dim(0), enc.dim(0)} ||
        tape.enc_t.shape != std::vector<int64_t>{enc.dim(1), enc.dim(2), enc.dim(0)})
        fail("attention backward: dout ", dout.shape_str(), " or the tape (alpha ", tape.alpha.shape_str(), ", enc_t ",
             tape.enc_t.shape_str(), ") does not match the forward");
    backward_inputs_.alpha.set(halide_view(tape.alpha));
    backward_inputs_.context.set(halide_view(tape.context));
    backward_inputs_.mixed.set(halide_view(tape.mixed));
    backward_inputs_.enc_t.set(halide_view(tape.enc_t));
    backward_inputs_.dout.set(halide_view(dout));
    ensure_shape(grads.dcell, cell.shape);
    ensure_shape(grads.denc, enc.shape);
    ensure_shape(grads.dgate_o, cell.shape);
    ensure_shape(grads.dweights, weights.shape);
    std::vector<Halide::Buffer<>> outputs{halide_view(grads.dcell), halide_view(grads.denc),
                                          halide_rows_view(grads.dgate_o), halide_view(grads.dweights)};
    Halide::Realization realization(outputs);
    backward_.realize(realization);
}

std::shared_ptr<CompiledAttention> compiled_attention(const Halide::Target &target) {
    return compiled_per_target<CompiledAttention>(target);
}

}  // namespace qrnn
