#include "runtime/compiled_condition.h"

#include "core/error.h"
#include "runtime/compiled_layer.h"
#include "runtime/kernel.h"

namespace qrnn {

CompiledCondition::CompiledCondition(const Halide::Target &target) {
    if (target.has_gpu_feature()) fail("conditioning runs on CPU targets only so far (target ", target.to_string(), ")");
    forward_ = build_condition_forward(inputs_.fwd, target);
    backward_ = build_condition_backward(inputs_, target);
    compile_kernels({&forward_, &backward_}, target);
}

void CompiledCondition::bind(const Tensor<float> &V, const Tensor<float> &last) {
    if (V.shape.size() != 3 || V.dim(1) != V.dim(2) || last.shape.size() != 2 || last.dim(1) != V.dim(2))
        fail("conditioning: V ", V.shape_str(), " and last states ", last.shape_str(), " must be [G][m][m] and [B][m]");
    inputs_.fwd.V.set(halide_view(V));
    inputs_.fwd.last.set(halide_view(last));
}

void CompiledCondition::forward(const Tensor<float> &V, const Tensor<float> &last, Tensor<float> &bias) {
    std::lock_guard<std::mutex> lock(mutex_);
    bind(V, last);
    ensure_shape(bias, {V.dim(0), last.dim(0), V.dim(2)});
    std::vector<Halide::Buffer<>> outputs{halide_view(bias)};
    Halide::Realization realization(outputs);
    forward_.realize(realization);
}

void CompiledCondition::backward(const Tensor<float> &V, const Tensor<float> &last, const Tensor<float> &dbias,
                                 Tensor<float> &dV, Tensor<float> &dlast) {
    std::lock_guard<std::mutex> lock(mutex_);
    bind(V, last);
    if (dbias.shape != std::vector<int64_t>{V.dim(0), last.dim(0), V.dim(2)})
        fail("conditioning backward: dbias ", dbias.shape_str(), " is not [", V.dim(0), "][", last.dim(0), "][", V.dim(2), "]");
    inputs_.dbias.set(halide_view(dbias));
    ensure_shape(dV, V.shape);
    ensure_shape(dlast, last.shape);
    std::vector<Halide::Buffer<>> outputs{halide_view(dV), halide_view(dlast)};
    Halide::Realization realization(outputs);
    backward_.realize(realization);
}

std::shared_ptr<CompiledCondition> compiled_condition(const Halide::Target &target) {
    return compiled_per_target<CompiledCondition>(target);
}

}  // namespace qrnn
