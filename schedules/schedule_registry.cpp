#include <limits>

#include "core/named_registry.h"
#include "schedules/schedule.h"

namespace qrnn {
namespace {
NamedRegistry<LayerSchedule> &layer_schedules() {
    static NamedRegistry<LayerSchedule> schedules("schedule", "layer schedule");
    return schedules;
}

void check_knob(const std::string &schedule, const std::map<std::string, KnobSpec> &specs, const std::string &knob,
                int64_t value) {
    auto it = specs.find(knob);
    if (it == specs.end()) fail("schedule '", schedule, "': knob '", knob, "' has no spec with a valid range");
    const KnobSpec &spec = it->second;
    if (value < spec.min || value > spec.max)
        fail("schedule '", schedule, "': knob '", knob, "' = ", value, " is outside [", spec.min, ", ", spec.max, "]");
}
void check_knob(const LayerSchedule &s, const std::string &knob, int64_t value) { check_knob(s.name, s.knob_specs, knob, value); }
}  // namespace

void register_layer_schedule(LayerSchedule s) {
    if (s.name.empty() || (!s.apply && !s.build)) fail("layer schedule needs a name and an apply or build function");
    for (auto &kv : s.knob_specs)
        if (!s.defaults.count(kv.first)) fail("layer schedule '", s.name, "' describes unknown knob '", kv.first, "'");
    if (s.target_defaults) s.defaults = s.target_defaults(Halide::get_jit_target_from_environment());
    for (auto &[knob, value] : s.defaults) {
        auto spec = s.knob_specs.find(knob);
        if (spec == s.knob_specs.end() || spec->second.max < spec->second.min)
            fail("layer schedule '", s.name, "': knob '", knob, "' needs a spec with a valid range [min, max]");
        check_knob(s, knob, value);
        for (int choice : spec->second.choices) check_knob(s, knob, choice);
    }
    std::string name = s.name;
    layer_schedules().add(name, std::move(s));
}

const LayerSchedule &find_layer_schedule(const std::string &name) { return layer_schedules().find(name); }
std::vector<std::string> layer_schedule_names() { return layer_schedules().names(); }

Knobs default_knobs(const LayerSchedule &schedule, const Halide::Target &target) {
    return schedule.target_defaults ? schedule.target_defaults(target) : schedule.defaults;
}

Knobs merge_knobs(const LayerSchedule &schedule, const Knobs &overrides, const Halide::Target &target) {
    return merge_knob_overrides(schedule.name, default_knobs(schedule, target), schedule.knob_specs, overrides);
}

std::string knobs_key(const Knobs &knobs) {
    std::string key;
    for (auto &kv : knobs) key += "|" + kv.first + "=" + std::to_string(kv.second);
    return key;
}

Knobs merge_knob_overrides(const std::string &schedule, const Knobs &defaults, const std::map<std::string, KnobSpec> &specs,
                           const Knobs &overrides) {
    Knobs merged = defaults;
    for (auto &kv : overrides) {
        if (!merged.count(kv.first)) fail("schedule '", schedule, "' has no knob '", kv.first, "'");
        merged[kv.first] = kv.second;
    }
    for (auto &[knob, value] : merged) check_knob(schedule, specs, knob, value);  // overrides and target defaults
    return merged;
}

int knob_value(const std::string &knob, int64_t value) {
    if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max())
        fail("knob '", knob, "' = ", value, " is out of range");
    return static_cast<int>(value);
}

std::string LayerShape::key() const {
    return "T=" + std::to_string(T) + ",B=" + std::to_string(B) + ",n=" + std::to_string(n) + ",m=" + std::to_string(m) +
           ",k=" + std::to_string(k);
}

Halide::Pipeline build_layer_pipeline(const LayerSchedule &schedule, const LayerInputs &in, const PoolingVariant &variant,
                                      const Halide::Target &target, const Knobs &knobs, const LayerShape &shape) {
    if (schedule.per_shape && shape.T < 1) fail("schedule '", schedule.name, "' is compiled per shape and needs one");
    if (schedule.build) return schedule.build(in, variant, target, knobs, shape);
    LayerFuncs funcs = define_qrnn_layer(in, variant, schedule.conv_h_tile ? schedule.conv_h_tile(target, knobs) : 0);
    schedule.apply(funcs, in, target, knobs);
    return Halide::Pipeline(funcs.outputs());
}

}  // namespace qrnn
