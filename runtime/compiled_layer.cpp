#include "runtime/compiled_layer.h"

#include <dlfcn.h>

#include <map>

#include "core/error.h"
#include "runtime/buffer_cache.h"

namespace qrnn {
namespace {
// Halide view of a row-major tensor: dimensions reversed (innermost first).
Halide::Buffer<float> view(const Tensor<float> &t) {
    std::vector<int> dims(t.shape.rbegin(), t.shape.rend());
    return Halide::Buffer<float>(const_cast<float *>(t.data.data()), dims);
}

void expect_shape(const char *what, const Tensor<float> &t, std::vector<int64_t> want) {
    if (t.shape != want) {
        Tensor<float> w;
        w.shape = want;
        fail("layer ", what, " has shape ", t.shape_str(), ", expected ", w.shape_str());
    }
}
}  // namespace

Halide::Target parse_target(const std::string &target) {
    if (target.empty()) return Halide::get_jit_target_from_environment();
    if (!Halide::Target::validate_target_string(target))
        fail("invalid Halide target '", target, "' (e.g. host, host-avx512, host-cuda-cuda_capability_80)");
    return Halide::Target(target);
}

void require_cuda_device() {
    void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!lib) throw Unavailable("no CUDA device: the CUDA driver (libcuda.so.1) is not installed on this machine");
    using InitFn = int (*)(unsigned);
    using CountFn = int (*)(int *);
    auto init = reinterpret_cast<InitFn>(dlsym(lib, "cuInit"));
    auto count_fn = reinterpret_cast<CountFn>(dlsym(lib, "cuDeviceGetCount"));
    int count = 0;
    if (!init || !count_fn || init(0) != 0 || count_fn(&count) != 0 || count < 1)
        throw Unavailable("no CUDA device: the CUDA driver found no usable GPU");
}

CompiledLayer::CompiledLayer(const std::string &pooling, const std::string &schedule, const Knobs &knobs,
                             const Halide::Target &target, const LayerShape &shape)
    : variant_(&find_pooling(pooling)), schedule_(schedule) {
    const LayerSchedule &s = find_layer_schedule(schedule);
    const bool gpu_target = target.has_gpu_feature();
    if (target.has_feature(Halide::Target::CUDA)) require_cuda_device();
    if (gpu_target != (s.target_family == "gpu"))
        fail("schedule '", schedule, "' is for ", s.target_family, " targets, not ", target.to_string());
    on_device_ = gpu_target;
    pipeline_ = build_layer_pipeline(s, inputs_, *variant_, target, merge_knobs(s, knobs, target), shape);
    if (!gpu_target) use_buffer_cache(pipeline_);
    pipeline_.compile_jit(target);
}

void CompiledLayer::run(const LayerCall &call) {
    const Tensor<float> &x = *call.x;
    if (x.shape.size() != 3) fail("layer input x must have 3 dimensions [T][B][n], got ", x.shape_str());
    const int64_t T = x.dim(0), B = x.dim(1), n = x.dim(2);
    const auto &w = call.params->weights;
    if (w.shape.size() != 4) fail("layer weights must have 4 dimensions [G][k][n][m], got ", w.shape_str());
    const int64_t G = w.dim(0), k = w.dim(1), m = w.dim(3);
    if (G != variant_->gate_count())
        fail("layer weights have ", G, " gates, pooling '", variant_->name, "' needs ", variant_->gate_count());
    if (T < 1 || B < 1 || n < 1 || m < 1 || k < 1) fail("layer sizes must be >= 1, got x ", x.shape_str(), " weights ", w.shape_str());
    expect_shape("weights", w, {G, k, n, m});
    expect_shape("bias", call.params->bias, {G, m});
    expect_shape("history", call.state->history, {std::max<int64_t>(k - 1, 1), B, n});
    expect_shape("c0", call.state->c, {B, m});
    expect_shape("h output", *call.h, {T, B, m});
    expect_shape("c output", *call.c, {T, B, m});

    std::lock_guard<std::mutex> lock(mutex_);
    Halide::Buffer<float> inputs[] = {view(x), view(call.state->history), view(w), view(call.params->bias),
                                      view(call.state->c)};
    if (on_device_)
        for (auto &buffer : inputs) buffer.set_host_dirty();  // copied to the device by the pipeline
    inputs_.x.set(inputs[0]);
    inputs_.history.set(inputs[1]);
    inputs_.weights.set(inputs[2]);
    inputs_.bias.set(inputs[3]);
    inputs_.c0.set(inputs[4]);
    inputs_.time_offset.set(static_cast<int>(call.time_offset));
    inputs_.dropout_key.set(call.masks.dropout_key);
    inputs_.dropout_threshold.set(call.masks.dropout_threshold);
    inputs_.dropout_scale.set(static_cast<float>(call.masks.dropout_scale));
    inputs_.zoneout_key.set(call.masks.zoneout_key);
    inputs_.zoneout_threshold.set(call.masks.zoneout_threshold);
    Halide::Buffer<float> c_out = view(*call.c), h_out = view(*call.h);
    pipeline_.realize(Halide::Realization({c_out, h_out}));
    if (on_device_) {
        c_out.copy_to_host();
        h_out.copy_to_host();
    }
}

std::shared_ptr<CompiledLayer> compiled_layer(const std::string &pooling, const std::string &schedule,
                                              const Knobs &knobs, const LayerShape &shape, const std::string &target) {
    static std::mutex mutex;
    static std::map<std::string, std::shared_ptr<CompiledLayer>> cache;
    Halide::Target t = parse_target(target);
    std::string key = pooling + "|" + schedule + "|" + t.to_string();
    for (auto &kv : knobs) key += "|" + kv.first + "=" + std::to_string(kv.second);
    if (find_layer_schedule(schedule).per_shape) key += "|" + shape.key();
    std::lock_guard<std::mutex> lock(mutex);
    auto &slot = cache[key];
    if (!slot) slot = std::make_shared<CompiledLayer>(pooling, schedule, knobs, t, shape);
    return slot;
}

}  // namespace qrnn
