#include "core/named_registry.h"
#include "schedules/schedule.h"

namespace qrnn {
namespace {
NamedRegistry<LayerSchedule> &layer_schedules() {
    static NamedRegistry<LayerSchedule> schedules("schedule", "layer schedule");
    return schedules;
}
}  // namespace

void register_layer_schedule(LayerSchedule s) {
    if (s.name.empty() || (!s.apply && !s.build)) fail("layer schedule needs a name and an apply or build function");
    check_schedule_record(s, "layer schedule");
    std::string name = s.name;
    layer_schedules().add(name, std::move(s));
}

const LayerSchedule &find_layer_schedule(const std::string &name) { return layer_schedules().find(name); }
std::vector<std::string> layer_schedule_names() { return layer_schedules().names(); }

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
