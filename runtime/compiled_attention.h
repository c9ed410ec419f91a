// The attention pipelines (core/attention.h, schedules/attention_schedule.h) JIT-compiled once per target and
// run on host tensors (layouts in core/attention.h). Shape-generic; CPU targets.
#pragma once
#include <memory>
#include <mutex>

#include "runtime/kernel.h"
#include "schedules/attention_schedule.h"
#include "runtime/tensor.h"

namespace qrnn {

struct AttentionTape {
    Tensor<float> alpha;    // [B][T][S]
    Tensor<float> context;  // [T][B][m]
    Tensor<float> mixed;    // [T][B][m]
    Tensor<float> enc_t;    // [B][m][S] the encoder outputs transposed (the score GEMMs' operand), for the backward
};

struct AttentionGradsF {
    Tensor<float> dcell, denc, dgate_o, dweights;
};

class CompiledAttention {
public:
    explicit CompiledAttention(const Halide::Target &target);
    // out [T][B][m] and the tape; lengths checked (each in [1, S]).
    void forward(const Tensor<float> &cell, const Tensor<float> &gate_o, const Tensor<float> &enc,
                 const std::vector<int64_t> &lengths, const Tensor<float> &weights, Tensor<float> &out, AttentionTape &tape);
    void backward(const Tensor<float> &cell, const Tensor<float> &gate_o, const Tensor<float> &enc,
                  const std::vector<int64_t> &lengths, const Tensor<float> &weights, const AttentionTape &tape,
                  const Tensor<float> &dout, AttentionGradsF &grads);

private:
    void bind(AttentionInputs &in, const Tensor<float> &cell, const Tensor<float> &gate_o, const Tensor<float> &enc,
              const std::vector<int64_t> &lengths, const Tensor<float> &weights);
    AttentionInputs forward_inputs_;
    AttentionBackwardInputs backward_inputs_;
    Kernel forward_, backward_;
    Halide::Buffer<int32_t> lengths_;
    std::mutex mutex_;
};

// Cached per target for the life of the process.
std::shared_ptr<CompiledAttention> compiled_attention(const Halide::Target &target = Halide::get_jit_target_from_environment());

}  // namespace qrnn
