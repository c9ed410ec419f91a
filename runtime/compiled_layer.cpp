#include "runtime/compiled_layer.h"

#include <dlfcn.h>

#include <iostream>
#include <map>

#include "core/error.h"

namespace qrnn {
namespace {
void expect_shape(const char *what, const Tensor<float> &t, std::vector<int64_t> want) {
    if (t.shape != want) {
        Tensor<float> w;
        w.shape = want;
        fail("layer ", what, " has shape ", t.shape_str(), ", expected ", w.shape_str());
    }
}
}  // namespace

Halide::Buffer<float> halide_rows_view(const Tensor<float> &t) {
    const int inner = static_cast<int>(t.shape.back());
    return Halide::Buffer<float>(const_cast<float *>(t.data.data()), {inner, static_cast<int>(t.size() / inner)});
}

Halide::Buffer<float> channel_slice(float *data, int64_t T, int64_t B, int64_t width, int64_t first, int64_t count) {
    halide_dimension_t dims[3] = {{0, static_cast<int32_t>(count), 1},
                                  {0, static_cast<int32_t>(B), static_cast<int32_t>(width)},
                                  {0, static_cast<int32_t>(T), static_cast<int32_t>(B * width)}};
    return Halide::Buffer<float>(data + first, 3, dims);
}

static Halide::Buffer<float> checked_view(const Halide::Buffer<float> &view, const Tensor<float> &t, const char *what) {
    if (!view.defined()) return halide_view(t);
    for (int d = 0; d < 3; d++)
        if (view.dim(d).extent() != t.dim(2 - d)) fail("layer ", what, " view does not match its shape ", t.shape_str());
    return view;
}

Halide::Buffer<float> call_input(const LayerCall &call) { return checked_view(call.x_view, *call.x, "input"); }
Halide::Buffer<float> call_output(const LayerCall &call) { return checked_view(call.h_view, *call.h, "h output"); }

void require_environment_target(const std::string &model, const std::string &target) {
    if (target.empty()) return;
    const std::string asked = parse_target(target).without_feature(Halide::Target::JIT).to_string();
    const std::string runs = Halide::get_jit_target_from_environment().without_feature(Halide::Target::JIT).to_string();
    if (asked != runs)
        fail("model '", model, "' runs on the JIT target ", runs, " (HL_JIT_TARGET), not on target '", target,
             "': set HL_JIT_TARGET=", target, " instead (qrnn then holds oneDNN to its ISA too)");
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

void check_precision(Precision precision, const Halide::Target &target) {
    if (precision == Precision::f32) return;
    const char *name = precision_name(precision);
    if (target.has_gpu_feature()) fail("precision ", name, " runs on CPU targets, not ", target.to_string());
    static std::once_flag noted[3];
    const bool int8 = precision == Precision::int8;
    if (!(int8 ? has_int8_dot_product(target) : has_bf16_dot_product(target)))
        std::call_once(noted[static_cast<int>(precision)], [&] {
            std::cerr << "note: target " << target.without_feature(Halide::Target::JIT).to_string() << " has no " << name
                      << " dot product (" << (int8 ? "avx512_vnni" : "avx512_bf16") << "): " << name
                      << " runs on a fallback, correct but slower than f32\n";
        });
}

CompiledLayer::CompiledLayer(const PoolingVariant &pooling, const std::string &schedule, const Knobs &knobs,
                             const Halide::Target &asked_target, const LayerShape &shape, Precision precision)
    : variant_(&pooling), schedule_(schedule) {
    const LayerSchedule &s = find_layer_schedule(schedule);
    const Halide::Target target = precision == Precision::int8 ? int8_kernel_target(asked_target) : asked_target;
    check_precision(precision, target);
    if (precision == Precision::int8 && !s.int8)
        fail("schedule '", schedule, "' has no int8 conv (precision int8 runs with schedule 'tuned')");
    inputs_.precision = precision;
    const bool gpu_target = target.has_gpu_feature();
    if (target.has_feature(Halide::Target::CUDA)) require_cuda_device();
    if (gpu_target != (s.target_family == "gpu"))
        fail("schedule '", schedule, "' is for ", s.target_family, " targets, not ", target.to_string());
    on_device_ = gpu_target;
    pipeline_ = build_layer_pipeline(s, inputs_, *variant_, target, merge_knobs(s, knobs, target), shape);
    compile_kernels({&pipeline_}, target);
}

void check_layer_call(const LayerCall &call, const PoolingVariant &variant) {
    const Tensor<float> &x = *call.x;
    if (x.shape.size() != 3) fail("layer input x must have 3 dimensions [T][B][n], got ", x.shape_str());
    const int64_t T = x.dim(0), B = x.dim(1), n = x.dim(2);
    const auto &w = call.params->weights;
    if (w.shape.size() != 4) fail("layer weights must have 4 dimensions [G][k][n][m], got ", w.shape_str());
    const int64_t G = w.dim(0), k = w.dim(1), m = w.dim(3);
    if (G != variant.gate_count())
        fail("layer weights have ", G, " gates, pooling '", variant.name, "' needs ", variant.gate_count());
    if (T < 1 || B < 1 || n < 1 || m < 1 || k < 1) fail("layer sizes must be >= 1, got x ", x.shape_str(), " weights ", w.shape_str());
    expect_shape("weights", w, {G, k, n, m});
    expect_shape("bias", call.params->bias, {G, m});
    expect_shape("history", call.state->history, {std::max<int64_t>(k - 1, 1), B, n});
    expect_shape("c0", call.state->c, {B, m});
    expect_shape("h output", *call.h, {T, B, m});
    expect_shape("c output", *call.c, {T, B, m});
}

void bind_layer_inputs(LayerInputs &in, const LayerCall &call, bool on_device) {
    Halide::Buffer<float> inputs[] = {call_input(call), halide_view(call.state->history),
                                      halide_view(call.params->weights), halide_view(call.params->bias),
                                      halide_view(call.state->c)};
    if (on_device)
        for (auto &buffer : inputs) buffer.set_host_dirty();  // copied to the device by the pipeline
    in.x.set(inputs[0]);
    in.history.set(inputs[1]);
    in.weights.set(inputs[2]);
    if (in.precision == Precision::int8) {
        if (!call.int8) fail("int8 layer call without int8 parameters (runtime/int8_params.h)");
        in.weights_int8.set(halide_view(call.int8->weights));
        in.weight_sums.set(halide_view(call.int8->weight_sums));
        in.dequantize.set(halide_view(call.int8->dequantize));
        in.input_inverse_scale.set(1.0f / call.int8->input_scale);
    }
    in.bias.set(inputs[3]);
    in.c0.set(inputs[4]);
    in.time_offset.set(static_cast<int>(call.time_offset));
    in.dropout_key.set(call.masks.dropout_key);
    in.dropout_threshold.set(call.masks.dropout_threshold);
    in.dropout_scale.set(static_cast<float>(call.masks.dropout_scale));
    in.zoneout_key.set(call.masks.zoneout_key);
    in.zoneout_threshold.set(call.masks.zoneout_threshold);
}

void CompiledLayer::run(const LayerCall &call) {
    check_layer_call(call, *variant_);
    std::lock_guard<std::mutex> lock(mutex_);
    bind_layer_inputs(inputs_, call, on_device_);
    Halide::Buffer<float> c_out = halide_view(*call.c), h_out = call_output(call);
    pipeline_.realize(Halide::Realization({c_out, h_out}));
    if (on_device_) {
        c_out.copy_to_host();
        h_out.copy_to_host();
    }
}

std::shared_ptr<CompiledLayer> compiled_layer(const PoolingVariant &pooling, const std::string &schedule,
                                              const Knobs &knobs, const LayerShape &shape, const Halide::Target &t,
                                              Precision precision) {
    std::string key = pooling.name + "|" + schedule + "|" + t.to_string() + knobs_key(knobs);
    if (precision != Precision::f32) key += std::string("|") + precision_name(precision);
    if (find_layer_schedule(schedule).per_shape) key += "|" + shape.key();
    return pipeline_cache().get<CompiledLayer>(
        key, [&] { return std::make_shared<CompiledLayer>(pooling, schedule, knobs, t, shape, precision); });
}

}  // namespace qrnn
