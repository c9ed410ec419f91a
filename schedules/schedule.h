// Schedules for the layer algorithm, kept apart from it (core/) and chosen by name at run time.
#pragma once
#include <Halide.h>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/qrnn_layer.h"

namespace qrnn {

using Knobs = std::map<std::string, int>;  // tunable parameters, e.g. {"tile_h", 32}

// Problem shape a pipeline is compiled for: only schedules with per_shape (autoschedulers, tuned-db) use it.
struct LayerShape {
    int64_t T = 0, B = 0, n = 0, m = 0, k = 0;
    std::string key() const;  // "T=..,B=..,n=..,m=..,k=.."
};

// A knob's meaning, the values the autotuner tries, and its valid range [min, max]: every value outside is
// an error (merge_knobs), so a knob never reaches a schedule with a value that computes wrong output or makes
// Halide's compiler explode (e.g. an unrolled tile of 100000). Every knob of a schedule needs a spec.
struct KnobSpec {
    std::string help;
    std::vector<int> choices;
    int min = 1, max = 0;  // max < min: no range given (register_layer_schedule refuses it)
};

struct LayerSchedule {
    std::string name;
    std::string description;
    std::string target_family;  // "cpu" or "gpu"
    Knobs defaults;             // tunable parameters and their default values (for the host target)
    // Applies the schedule; knobs holds every default, merged with overrides (merge_knobs).
    std::function<void(LayerFuncs &, const LayerInputs &, const Halide::Target &, const Knobs &)> apply;
    std::map<std::string, KnobSpec> knob_specs;  // per knob of defaults: help, autotuning choices, valid range
    bool per_shape = false;  // compiled per shape (estimates from it), e.g. the autoschedulers
    // Optional: builds the whole pipeline (an alternative algorithm, an autoscheduler); apply is then unused.
    // Its outputs are those of LayerFuncs::outputs(): the cell (c_t, h_t), e.g. of an alternative scan.
    std::function<Halide::Pipeline(const LayerInputs &, const PoolingVariant &, const Halide::Target &, const Knobs &,
                                   const LayerShape &)>
        build;
    // Optional: the defaults for a target (e.g. GEMM tiles sized to its vector registers); else `defaults`.
    std::function<Knobs(const Halide::Target &)> target_defaults;
    // Optional: the width of its conv GEMM's h tiles (define_qrnn_layer's conv_h_tile); else 0.
    std::function<int(const Halide::Target &, const Knobs &)> conv_h_tile;
};

void register_layer_schedule(LayerSchedule schedule);
const LayerSchedule &find_layer_schedule(const std::string &name);  // throws qrnn::Error listing known ones
std::vector<std::string> layer_schedule_names();

// The schedule's defaults for a target (target_defaults, else defaults).
Knobs default_knobs(const LayerSchedule &schedule, const Halide::Target &target = Halide::get_jit_target_from_environment());
// The defaults for `target` with overrides applied; an override naming no knob of the schedule, or any
// value outside its knob's range, is an error ("schedule 'fused': knob 'chunk' = 0 is outside [1, 4096]").
Knobs merge_knobs(const LayerSchedule &schedule, const Knobs &overrides,
                  const Halide::Target &target = Halide::get_jit_target_from_environment());
// The same for any schedule given its name and defaults.
// Every merged value is checked against its spec's range.
Knobs merge_knob_overrides(const std::string &schedule, const Knobs &defaults, const std::map<std::string, KnobSpec> &specs,
                           const Knobs &overrides);

// "|name=value" for every knob: the knobs' part of a compiled-pipeline cache key.
std::string knobs_key(const Knobs &knobs);

// A knob value given as a 64-bit integer (CLI, sweep file, tuning database) as an int; fails naming the
// knob when it does not fit (merge_knobs then checks the knob's own range).
int knob_value(const std::string &knob, int64_t value);

// The layer pipeline of a schedule: its build hook, or define_qrnn_layer + apply. knobs must be merged.
Halide::Pipeline build_layer_pipeline(const LayerSchedule &schedule, const LayerInputs &in, const PoolingVariant &variant,
                                      const Halide::Target &target, const Knobs &knobs, const LayerShape &shape);

}  // namespace qrnn
