// Layer pipelines scheduled by Halide 14's autoscheduler plugins (Adams2019, Li2018, Mullapudi2016), with
// estimates set from the actual shape: such pipelines are compiled per shape (LayerSchedule::per_shape).
// Figure (2-core AVX-512 VM, qrnn autotune fo k=2 B=4 T=64 n=48 m=64): Mullapudi2016 0.351 ms, Adams2019
// 0.614 ms, Li2018 0.946 ms, vs tuned 0.130 ms in the same run.
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
