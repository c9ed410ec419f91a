#include <map>
#include <mutex>

#include "core/error.h"
#include "plugins/model.h"

namespace qrnn {
namespace {
std::map<std::string, ModelPlugin> &registry() {
    static std::map<std::string, ModelPlugin> models;
    return models;
}
std::mutex &registry_mutex() {
    static std::mutex m;
    return m;
}
}  // namespace

void Model::dump(const std::string &path) { fail("--dump '", path, "': this model does not support HDF5 dumps"); }

void register_model(ModelPlugin p) {
    if (p.name.empty() || !p.build) fail("model plugin needs a name and a build function");
    std::lock_guard<std::mutex> lock(registry_mutex());
    if (registry().count(p.name)) fail("model '", p.name, "' is already registered");
    std::string name = p.name;
    registry().emplace(name, std::move(p));
}

const ModelPlugin &find_model(const std::string &name) {
    std::lock_guard<std::mutex> lock(registry_mutex());
    auto it = registry().find(name);
    if (it == registry().end()) {
        std::string known;
        for (auto &kv : registry()) known += (known.empty() ? "" : ", ") + kv.first;
        fail("unknown model '", name, "' (known: ", known, ")");
    }
    return it->second;
}

std::vector<std::string> model_names() {
    std::lock_guard<std::mutex> lock(registry_mutex());
    std::vector<std::string> names;
    for (auto &kv : registry()) names.push_back(kv.first);
    return names;
}

std::string model_unavailable(const ModelPlugin &plugin) { return plugin.unavailable ? plugin.unavailable() : ""; }

void require_single_layer_eval(const ModelConfig &cfg) {
    if (cfg.layers != 1) fail("model '", cfg.model, "' supports --layers 1 only (got ", cfg.layers, ")");
    if (cfg.training) fail("model '", cfg.model, "' supports --mode eval only (no zoneout/dropout)");
}

}  // namespace qrnn
