// Layer pipelines scheduled by Halide 14's autoscheduler plugins (Adams2019, Li2018, Mullapudi2016), with
// estimates set from the actual shape: such pipelines are compiled per shape (LayerSchedule::per_shape).
#pragma once
#include "schedules/schedule.h"

namespace qrnn {

// Loads libautoschedule_<plugin>.so once (from $QRNN_HALIDE_PLUGIN_DIR or Halide's install directory).
void load_autoscheduler(const std::string &plugin);

// Defines the layer, sets every input/output estimate from shape, runs autoscheduler `name` (e.g.
// "Adams2019") for target with knobs "parallelism" and "balance" (MachineParams), returns the pipeline.
Halide::Pipeline build_auto_scheduled(const std::string &name, const LayerInputs &in, const PoolingVariant &variant,
                                      const Halide::Target &target, const Knobs &knobs, const LayerShape &shape);

// A registry entry for autoscheduler `name` on a target family ("cpu" or "gpu").
LayerSchedule auto_layer_schedule(const std::string &name, const std::string &family);

}  // namespace qrnn
