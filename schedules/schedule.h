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

struct LayerSchedule {
    std::string name;
    std::string description;
    std::string target_family;  // "cpu" or "gpu"
    Knobs defaults;             // tunable parameters and their default values
    // Applies the schedule; knobs holds every default, merged with overrides (merge_knobs).
    std::function<void(LayerFuncs &, const LayerInputs &, const Halide::Target &, const Knobs &)> apply;
};

void register_layer_schedule(LayerSchedule schedule);
const LayerSchedule &find_layer_schedule(const std::string &name);  // throws qrnn::Error listing known ones
std::vector<std::string> layer_schedule_names();

// The schedule's defaults with overrides applied; an override naming no knob of the schedule is an error.
Knobs merge_knobs(const LayerSchedule &schedule, const Knobs &overrides);

}  // namespace qrnn
