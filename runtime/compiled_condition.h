// The conditioning pipelines (core/condition.h, schedules/condition_schedule.h) JIT-compiled once per target and
// run on host tensors (layouts in core/condition.h). Shape-generic; CPU targets.
#pragma once
#include <memory>
#include <mutex>

#include "runtime/kernel.h"
#include "runtime/tensor.h"
#include "schedules/condition_schedule.h"

namespace qrnn {

class CompiledCondition {
public:
    explicit CompiledCondition(const Halide::Target &target);
    // bias [G][B][m] from V [G][m][m] and last [B][m].
    void forward(const Tensor<float> &V, const Tensor<float> &last, Tensor<float> &bias);
    // dV [G][m][m] (overwritten) and dlast [B][m] from dbias [G][B][m].
    void backward(const Tensor<float> &V, const Tensor<float> &last, const Tensor<float> &dbias, Tensor<float> &dV,
                  Tensor<float> &dlast);

private:
    void bind(const Tensor<float> &V, const Tensor<float> &last);
    ConditionBackwardInputs inputs_;  // inputs_.fwd serves the forward
    Kernel forward_, backward_;
    std::mutex mutex_;
};

// Cached per target for the life of the process.
std::shared_ptr<CompiledCondition> compiled_condition(const Halide::Target &target = Halide::get_jit_target_from_environment());

}  // namespace qrnn
