// "tuned-db": the fastest verified record of the tuning database (schedules/tuning_db.h, written by
// `qrnn autotune`) for this pooling and target at the nearest shape; "tuned" when there is none.
#include <iostream>

#include "schedules/kernel_key.h"
#include "schedules/tuning_db.h"
#include "schedules/schedule.h"

namespace qrnn {
namespace {
using namespace Halide;

Pipeline build_from_db(const LayerInputs &in, const PoolingVariant &variant, const Target &target, const Knobs &,
                       const LayerShape &shape) {
    mark_build_uncacheable();  // the database is read here, not named by the compiled layer's key
    const std::string path = default_tuning_db_path(), target_name = tuning_target_name(target);
    auto best = best_tuning_record(read_usable_tuning_records(path, std::cerr), variant.name, target_name, shape);
    if (!best) {
        std::cerr << "note: tuned-db: no verified record for pooling " << variant.name << " on this target in " << path
                  << "; using 'tuned' (run qrnn autotune)\n";
        const LayerSchedule &tuned = find_layer_schedule("tuned");
        return build_layer_pipeline(tuned, in, variant, target, default_knobs(tuned, target), shape);
    }
    std::cerr << "note: tuned-db: using " << best->schedule;
    for (auto &kv : best->knobs) std::cerr << " " << kv.first << "=" << kv.second;
    std::cerr << " (" << best->median_ms << " ms at " << best->shape.key() << ", " << path << ")\n";
    const LayerSchedule &s = find_layer_schedule(best->schedule);
    return build_layer_pipeline(s, in, variant, target, merge_knobs(s, best->knobs, target), shape);
}

const bool tuned_db_registered = [] {
    LayerSchedule s{{"tuned-db", "best autotuned record for the nearest shape ($QRNN_TUNING_DB, qrnn autotune)", "cpu"}};
    s.per_shape = true;
    s.build = build_from_db;
    register_layer_schedule(s);
    return true;
}();
}  // namespace
}  // namespace qrnn
