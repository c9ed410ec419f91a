// The attention pipelines (core/attention.h, schedules/attention_schedule.h) JIT-compiled once per target and
// run on host tensors (layouts in core/attention.h). Shape-generic; CPU targets.
#pragma once
#include <memory>
#include <mutex>

#include "schedules/attention_schedule.h"
#include "runtime/tensor.h"

namespace qrnn {

struct AttentionTape {
    Tensor<float> alpha;    // [B][T][S]
    Tensor<float> context;  // [T][B][m]
    Tensor<float> mixed;    // [T][B][m]
};

struct AttentionGradsF {
    Tensor<float> dcell, denc, dgate_o, dweights;
};

// The forward's GEMM flops (scores, context, mix): what decides whether a call's parallel loops use a second core.
double attention_forward_flops(int64_t T, int64_t S, int64_t B, int64_t m);
// Below this many forward flops (forward 0.2-0.3 ms on one AVX-512 core) both passes run serially on the calling
// thread: T=37 S=53 B=5 m=203 (38 MFLOP) took as long or longer with 2 threads (fork/join per parallel loop,
// 6 forward, 9 backward; AMD EPYC VM, 2 cores), where OpenBLAS and oneDNN stay on one thread too.
constexpr double kAttentionParallelMinFlops = 64e6;

class CompiledAttention {
public:
    explicit CompiledAttention(const Halide::Target &target);
    // out [T][B][m] and the tape; lengths checked (each in [1, S]).
    void forward(const Tensor<float> &cell, const Tensor<float> &gate_o, const Tensor<float> &enc,
                 const std::vector<int64_t> &lengths, const Tensor<float> &weights, Tensor<float> &out, AttentionTape &tape);
    void backward(const Tensor<float> &cell, const Tensor<float> &gate_o, const Tensor<float> &enc,
                  const std::vector<int64_t> &lengths, const Tensor<float> &weights, const AttentionTape &tape,
                  const Tensor<float> &dout, AttentionGradsF &grads);
    // Tests reach both paths: 0 always uses the Halide thread pool, infinity never.
    void set_parallel_min_flops(double flops);

private:
    void bind(AttentionInputs &in, const Tensor<float> &cell, const Tensor<float> &gate_o, const Tensor<float> &enc,
              const std::vector<int64_t> &lengths, const Tensor<float> &weights);
    // Serial below parallel_min_flops_ (by the bound shapes), else the thread pool.
    Halide::JITUserContext call_context(const Tensor<float> &cell, const Tensor<float> &enc) const;
    AttentionInputs forward_inputs_;
    AttentionBackwardInputs backward_inputs_;
    Halide::Pipeline forward_, backward_;
    Halide::Buffer<int32_t> lengths_;
    double parallel_min_flops_ = kAttentionParallelMinFlops;
    std::mutex mutex_;
};

// Cached per target for the life of the process; empty target: the host JIT target.
std::shared_ptr<CompiledAttention> compiled_attention(const std::string &target = "");

}  // namespace qrnn
