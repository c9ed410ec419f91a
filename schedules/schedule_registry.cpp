#include <mutex>

#include "core/error.h"
#include "schedules/schedule.h"

namespace qrnn {
namespace {
std::map<std::string, LayerSchedule> &registry() {
    static std::map<std::string, LayerSchedule> schedules;
    return schedules;
}
std::mutex registry_mutex;
}  // namespace

void register_layer_schedule(LayerSchedule s) {
    std::lock_guard<std::mutex> lock(registry_mutex);
    if (s.name.empty() || !s.apply) fail("layer schedule needs a name and an apply function");
    if (registry().count(s.name)) fail("layer schedule '", s.name, "' is already registered");
    std::string name = s.name;
    registry().emplace(name, std::move(s));
}

const LayerSchedule &find_layer_schedule(const std::string &name) {
    std::lock_guard<std::mutex> lock(registry_mutex);
    auto it = registry().find(name);
    if (it == registry().end()) {
        std::string known;
        for (auto &kv : registry()) known += (known.empty() ? "" : ", ") + kv.first;
        fail("unknown schedule '", name, "' (known: ", known, ")");
    }
    return it->second;
}

std::vector<std::string> layer_schedule_names() {
    std::lock_guard<std::mutex> lock(registry_mutex);
    std::vector<std::string> names;
    for (auto &kv : registry()) names.push_back(kv.first);
    return names;
}

Knobs merge_knobs(const LayerSchedule &schedule, const Knobs &overrides) {
    Knobs merged = schedule.defaults;
    for (auto &kv : overrides) {
        if (!merged.count(kv.first)) fail("schedule '", schedule.name, "' has no knob '", kv.first, "'");
        merged[kv.first] = kv.second;
    }
    return merged;
}

}  // namespace qrnn
