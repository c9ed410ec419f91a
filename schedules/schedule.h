// Schedules for the layer algorithm, kept apart from it (core/) and chosen by name at run time.
#pragma once
#include <Halide.h>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/qrnn_layer.h"
#include "schedules/schedule_record.h"

namespace qrnn {

// Problem shape a pipeline is compiled for: only schedules with per_shape (autoschedulers, tuned-db) use it.
struct LayerShape {
    int64_t T = 0, B = 0, n = 0, m = 0, k = 0;
    std::string key() const;  // "T=..,B=..,n=..,m=..,k=.."
};

// The layer's forward (inference) schedules.
struct LayerSchedule : ScheduleRecord {
    // Applies the schedule; knobs holds every default, merged with overrides (merge_knobs).
    std::function<void(LayerFuncs &, const LayerInputs &, const Halide::Target &, const Knobs &)> apply;
    bool per_shape = false;  // compiled per shape (estimates from it), e.g. the autoschedulers
    bool int8 = false;       // schedules the int8 conv too (core/masked_conv.h, define_int8_conv)
    // Optional: builds the whole pipeline (an alternative algorithm, an autoscheduler); apply is then unused.
    // Its outputs are those of LayerFuncs::outputs(): the cell (c_t, h_t), e.g. of an alternative scan.
    std::function<Halide::Pipeline(const LayerInputs &, const PoolingVariant &, const Halide::Target &, const Knobs &,
                                   const LayerShape &)>
        build;
    // Optional: the width of its conv GEMM's h tiles (define_qrnn_layer's conv_h_tile); else 0.
    std::function<int(const Halide::Target &, const Knobs &)> conv_h_tile;
};

void register_layer_schedule(LayerSchedule schedule);
const LayerSchedule &find_layer_schedule(const std::string &name);  // throws qrnn::Error listing known ones
std::vector<std::string> layer_schedule_names();

// The layer pipeline of a schedule: its build hook, or define_qrnn_layer + apply. knobs must be merged.
Halide::Pipeline build_layer_pipeline(const LayerSchedule &schedule, const LayerInputs &in, const PoolingVariant &variant,
                                      const Halide::Target &target, const Knobs &knobs, const LayerShape &shape);

}  // namespace qrnn
