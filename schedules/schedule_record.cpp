#include "schedules/schedule_record.h"

#include <limits>

#include "core/error.h"

namespace qrnn {
namespace {
void check_knob(const std::string &schedule, const std::map<std::string, KnobSpec> &specs, const std::string &knob,
                int64_t value) {
    auto it = specs.find(knob);
    if (it == specs.end()) fail("schedule '", schedule, "': knob '", knob, "' has no spec with a valid range");
    const KnobSpec &spec = it->second;
    if (value < spec.min || value > spec.max)
        fail("schedule '", schedule, "': knob '", knob, "' = ", value, " is outside [", spec.min, ", ", spec.max, "]");
}
}  // namespace

void check_schedule_record(ScheduleRecord &s, const std::string &kind) {
    for (auto &kv : s.knob_specs)
        if (!s.defaults.count(kv.first)) fail(kind, " '", s.name, "' describes unknown knob '", kv.first, "'");
    if (s.target_defaults) s.defaults = s.target_defaults(Halide::get_jit_target_from_environment());
    for (auto &[knob, value] : s.defaults) {
        auto spec = s.knob_specs.find(knob);
        if (spec == s.knob_specs.end() || spec->second.max < spec->second.min)
            fail(kind, " '", s.name, "': knob '", knob, "' needs a spec with a valid range [min, max]");
        check_knob(s.name, s.knob_specs, knob, value);
        for (int choice : spec->second.choices) check_knob(s.name, s.knob_specs, knob, choice);
    }
}

Knobs default_knobs(const ScheduleRecord &schedule, const Halide::Target &target) {
    return schedule.target_defaults ? schedule.target_defaults(target) : schedule.defaults;
}

Knobs merge_knobs(const ScheduleRecord &schedule, const Knobs &overrides, const Halide::Target &target) {
    return merge_knob_overrides(schedule.name, default_knobs(schedule, target), schedule.knob_specs, overrides);
}

Knobs merge_knobs_for_width(const ScheduleRecord &schedule, const Knobs &overrides, int64_t m, const Halide::Target &target) {
    if (!schedule.width_defaults) return merge_knobs(schedule, overrides, target);
    return merge_knob_overrides(schedule.name, schedule.width_defaults(m, target), schedule.knob_specs, overrides);
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

std::string knobs_key(const Knobs &knobs) {
    std::string key;
    for (auto &kv : knobs) key += "|" + kv.first + "=" + std::to_string(kv.second);
    return key;
}

int knob_value(const std::string &knob, int64_t value) {
    if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max())
        fail("knob '", knob, "' = ", value, " is out of range");
    return static_cast<int>(value);
}

}  // namespace qrnn
