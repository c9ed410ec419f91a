// A layer pipeline (algorithm + named schedule) JIT-compiled once for a target and run on host tensors.
// Shape-generic: one compiled layer serves every T, B, n, m, k.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "runtime/kernel.h"
#include "core/qrnn_layer.h"
#include "runtime/int8_params.h"
#include "runtime/pipeline_cache.h"
#include "runtime/target.h"
#include "runtime/params.h"
#include "schedules/schedule.h"

namespace qrnn {

struct LayerCall {
    const Tensor<float> *x;        // [T][B][n]
    const LayerState<float> *state;  // history [max(k-1,1)][B][n], c [B][m]
    const LayerParams<float> *params;
    LayerMasks masks;
    int64_t time_offset = 0;
    Tensor<float> *h;  // [T][B][m], written
    Tensor<float> *c;  // [T][B][m], written
    // Optional strided views used instead of *x / *h when defined (same extents; e.g. channel slices of one
    // wider [T][B][width] buffer: the dense stack reads each layer's input as a prefix of it and writes each
    // output into it, nothing copied). *x and *h still give the shapes checked. dh_view: likewise for the dh of
    // a training backward (CompiledTrainingLayer::backward; its dh argument gives the shape).
    Halide::Buffer<float> x_view, h_view, dh_view;
    const Int8LayerParams *int8 = nullptr;  // an int8 layer's (runtime/int8_params.h): read instead of params' weights
};

// The view of channels [first, first + count) of a row-major [T][B][width] buffer (data), as a Halide
// buffer (count, B, T) with the buffer's strides.
Halide::Buffer<float> channel_slice(float *data, int64_t T, int64_t B, int64_t width, int64_t first, int64_t count);
// x and h of a call as the pipeline sees them (the views when defined).
Halide::Buffer<float> call_input(const LayerCall &call);
Halide::Buffer<float> call_output(const LayerCall &call);

// Checks every shape of a call against the variant; throws qrnn::Error naming a mismatch.
void check_layer_call(const LayerCall &call, const PoolingVariant &variant);
// Sets the pipeline inputs (buffers viewing the call's tensors; marked host-dirty for a device pipeline).
void bind_layer_inputs(LayerInputs &inputs, const LayerCall &call, bool on_device);
// Halide view of a row-major tensor: dimensions reversed (innermost first).
template <class T>
Halide::Buffer<T> halide_view(const Tensor<T> &t) {
    std::vector<int> dims(t.shape.rbegin(), t.shape.rend());
    return Halide::Buffer<T>(const_cast<T *>(t.data.data()), dims);
}
// The same tensor as 2-D rows: (innermost dimension, product of the others), e.g. [T][B][m] as (m, T*B).
Halide::Buffer<float> halide_rows_view(const Tensor<float> &t);

class CompiledLayer {
public:
    CompiledLayer(const PoolingVariant &pooling, const std::string &schedule, const Knobs &knobs = {},
                  const Halide::Target &target = Halide::get_jit_target_from_environment(),
                  const LayerShape &shape = {}, Precision precision = Precision::f32);
    void run(const LayerCall &call);  // checks every shape; throws qrnn::Error naming a mismatch
    const PoolingVariant &variant() const { return *variant_; }
    const std::string &schedule_name() const { return schedule_; }

private:
    const PoolingVariant *variant_;
    std::string schedule_;
    LayerInputs inputs_;
    Kernel pipeline_;
    std::mutex mutex_;  // inputs_ are shared Params
    bool on_device_ = false;  // GPU target: outputs are copied back to the host after each run
};

// Throws qrnn::Error "no CUDA device ..." unless a CUDA driver with at least one device is present.
void require_cuda_device();

// For a model that runs on the JIT environment's target (HL_JIT_TARGET; the Halide and oneDNN baselines): throws
// qrnn::Error naming the model when `target` is set to another one, instead of timing code of the wrong ISA.
void require_environment_target(const std::string &model, const std::string &target);

// One Compiled (constructed from a Halide::Target) per target, cached for the life of the process.
template <class Compiled>
std::shared_ptr<Compiled> compiled_per_target(const Halide::Target &target) {
    return pipeline_cache().get<Compiled>(target.to_string(), [&] { return std::make_shared<Compiled>(target); });
}

// The Compiled (made by make() on first use) for the JIT environment's target, which is fixed for the process: the
// baselines' pipelines, whose callers keep the reference (a static) instead of a lookup per layer call. `variant`
// tells apart several Compiled of one type.
template <class Compiled, class Make>
Compiled &environment_pipeline(Make make, const std::string &variant = "") {
    const std::string key = Halide::get_jit_target_from_environment().to_string() + variant;
    return *pipeline_cache().get<Compiled>(key, [&] { return make(); });
}

// environment_pipeline for one of a few variants of a Compiled (`index` < N, cached under the name `variant`), each
// made on first use; the references are kept here, one set per call site (`make`'s type), so later calls make no lookup.
template <class Compiled, size_t N, class Make>
Compiled &environment_variant(size_t index, const std::string &variant, Make make) {
    static std::mutex mutex;
    static Compiled *kept[N] = {};
    std::lock_guard<std::mutex> lock(mutex);
    if (!kept[index]) kept[index] = &environment_pipeline<Compiled>(make, variant);
    return *kept[index];
}

// Compiled layers cached by (pooling, schedule, knobs, target, precision; shape if the schedule is per_shape) for
// the life of the process.
std::shared_ptr<CompiledLayer> compiled_layer(const PoolingVariant &pooling, const std::string &schedule,
                                              const Knobs &knobs = {}, const LayerShape &shape = {},
                                              const Halide::Target &target = Halide::get_jit_target_from_environment(),
                                              Precision precision = Precision::f32);
// Throws qrnn::Error unless `precision` runs on `target` (bf16, int8: CPU targets; without the target's dot product
// they run on a fallback, correct but slower, which a one-line note on stderr says once per process and precision).
void check_precision(Precision precision, const Halide::Target &target);

}  // namespace qrnn
