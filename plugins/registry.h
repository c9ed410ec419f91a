// The plugin registry seen as one list: every kind (pooling, model, schedule) is registered in its own
// typed registry (core/pooling.h, plugins/model.h, schedules/schedule.h); this file lists them uniformly
// for `qrnn plugins` and for tools that need to know what exists.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace qrnn {

struct PluginListing {
    std::string kind;         // "pooling", "model", "schedule"
    std::string name;
    std::string description;
    std::string options;      // what it takes: gates (pooling), run options beyond the shape (model), knobs (schedule)
    std::string targets;      // e.g. "cpu", "cpu,gpu"
    std::string status;       // "available" or "unavailable: <why>"
    std::string source;       // "built-in" or the plugin library path
    std::string supports;     // models: passes=inference[+training] and architecture features, e.g. variable-length
};

std::vector<std::string> plugin_kinds();
// A kind listed from a layer above plugins/ (tasks/classifier_listing.cpp: "classifier"), after the built-in kinds,
// in registration order. A taken kind name throws qrnn::Error.
void register_plugin_kind(const std::string &kind, std::function<std::vector<PluginListing>()> list);
std::vector<PluginListing> list_plugins(const std::string &kind = "");  // "" = every kind; else must exist

}  // namespace qrnn
