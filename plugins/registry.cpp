#include "plugins/registry.h"

#include <functional>

#include "core/error.h"
#include "core/pooling.h"
#include "plugins/loader.h"
#include "plugins/model.h"
#include "schedules/schedule.h"

namespace qrnn {
namespace {
std::string join(const std::vector<std::string> &items, const char *sep = ",") {
    std::string out;
    for (auto &s : items) out += (out.empty() ? "" : sep) + s;
    return out;
}

std::vector<PluginListing> list_pooling() {
    std::vector<PluginListing> out;
    for (const PoolingVariant *v : all_poolings())
        // Pooling variants are algorithm pieces: any layer schedule (CPU or GPU) runs them.
        out.push_back({"pooling", v->name, v->description, "gates=" + v->gates, "any schedule", "available",
                       plugin_source("pooling", v->name)});
    return out;
}

std::vector<PluginListing> list_models() {
    std::vector<PluginListing> out;
    for (auto &name : model_names()) {
        const ModelPlugin &p = find_model(name);
        std::string why = model_unavailable(p);
        std::string options = p.options.empty() ? "(shape only)" : join(p.options);
        std::string supports = model_trains(p) ? "passes=inference+training" : "passes=inference";
        if (!p.features.empty()) supports += " " + join(p.features, "+");
        out.push_back({"model", name, p.description, options, join(p.targets),
                       why.empty() ? "available" : "unavailable: " + why, plugin_source("model", name), supports});
    }
    return out;
}

std::vector<PluginListing> list_schedules() {
    std::vector<PluginListing> out;
    for (auto &name : layer_schedule_names()) {
        const LayerSchedule &s = find_layer_schedule(name);
        std::vector<std::string> knobs;
        for (auto &kv : s.defaults) knobs.push_back(kv.first + "=" + std::to_string(kv.second));
        out.push_back({"schedule", name, s.description, join(knobs), s.target_family, "available",
                       plugin_source("schedule", name)});
    }
    return out;
}

using KindLister = std::pair<std::string, std::function<std::vector<PluginListing>()>>;

std::vector<KindLister> &kinds() {
    static std::vector<KindLister> all{{"pooling", list_pooling}, {"model", list_models}, {"schedule", list_schedules}};
    return all;
}
}  // namespace

void register_plugin_kind(const std::string &kind, std::function<std::vector<PluginListing>()> list) {
    for (auto &k : kinds())
        if (k.first == kind) fail("plugin kind '", kind, "' is registered twice");
    kinds().push_back({kind, std::move(list)});
}

std::vector<std::string> plugin_kinds() {
    std::vector<std::string> names;
    for (auto &k : kinds()) names.push_back(k.first);
    return names;
}

std::vector<PluginListing> list_plugins(const std::string &kind) {
    std::vector<PluginListing> out;
    bool found = kind.empty();
    for (auto &k : kinds()) {
        if (!kind.empty() && k.first != kind) continue;
        found = true;
        auto part = k.second();
        out.insert(out.end(), part.begin(), part.end());
    }
    if (!found) fail("unknown plugin kind '", kind, "' (known: ", join(plugin_kinds(), ", "), ")");
    return out;
}

}  // namespace qrnn
