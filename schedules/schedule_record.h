// What every schedule record states, whatever op and pass it schedules (LayerSchedule: the layer's forward;
// TrainingSchedule: its forward with a tape and backward; SeqSchedule: the variable-length/bidirectional layer):
// its name (unique among the records of its op and pass), its target family, and its knobs, stated once.
#pragma once
#include <Halide.h>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace qrnn {

using Knobs = std::map<std::string, int>;  // tunable parameters, e.g. {"tile_h", 32}

// A knob's meaning, the values the autotuner tries, and its valid range [min, max]: every value outside is
// an error (merge_knobs), so a knob never reaches a schedule with a value that computes wrong output or makes
// Halide's compiler explode (e.g. an unrolled tile of 100000). Every knob of a schedule needs a spec.
struct KnobSpec {
    std::string help;
    std::vector<int> choices;
    int min = 1, max = 0;  // max < min: no range given (registration refuses it)
};

struct ScheduleRecord {
    std::string name;
    std::string description;
    std::string target_family;  // "cpu" or "gpu"
    Knobs defaults;             // the knobs and their defaults (for the host target once registered)
    std::map<std::string, KnobSpec> knob_specs;  // one per knob of defaults: help, autotuning choices, valid range
    // Optional: the defaults for a target (e.g. GEMM tiles sized to its vector registers); else `defaults`.
    std::function<Knobs(const Halide::Target &)> target_defaults;
    // Optional: the defaults for a layer of m units (e.g. register tiles that pad m the least); else the target's.
    std::function<Knobs(int64_t m, const Halide::Target &)> width_defaults;
};

// The checks every registry makes: every spec names a knob of the defaults, every knob has a spec with a valid
// range, and every default (for the host) and autotuning choice lies in it. Sets `defaults` to the host's.
// Throws qrnn::Error "<kind> '<name>': knob 'K' needs a spec with a valid range [min, max]" and the like.
void check_schedule_record(ScheduleRecord &record, const std::string &kind);

// The schedule's defaults for a target (target_defaults, else defaults).
Knobs default_knobs(const ScheduleRecord &schedule, const Halide::Target &target = Halide::get_jit_target_from_environment());
// The defaults for `target` with overrides applied; an override naming no knob of the schedule, or any
// value outside its knob's range, is an error ("schedule 'fused': knob 'chunk' = 0 is outside [1, 4096]").
Knobs merge_knobs(const ScheduleRecord &schedule, const Knobs &overrides,
                  const Halide::Target &target = Halide::get_jit_target_from_environment());
// The same from the defaults for a layer of m units (width_defaults, else the target's).
Knobs merge_knobs_for_width(const ScheduleRecord &schedule, const Knobs &overrides, int64_t m, const Halide::Target &target);
// The same for any schedule given its name and defaults. Every merged value is checked against its spec's range.
Knobs merge_knob_overrides(const std::string &schedule, const Knobs &defaults, const std::map<std::string, KnobSpec> &specs,
                           const Knobs &overrides);

// "|name=value" for every knob: the knobs' part of a compiled-pipeline cache key.
std::string knobs_key(const Knobs &knobs);

// A knob value given as a 64-bit integer (CLI, sweep file, tuning database) as an int; fails naming the
// knob when it does not fit (merge_knobs then checks the knob's own range).
int knob_value(const std::string &knob, int64_t value);

}  // namespace qrnn
