#include "core/named_registry.h"
#include "plugins/model.h"

namespace qrnn {
namespace {
NamedRegistry<ModelPlugin> &registry() {
    static NamedRegistry<ModelPlugin> models("model");
    return models;
}
}  // namespace

void Model::dump(const std::string &path) { fail("--dump '", path, "': this model does not support HDF5 dumps"); }

void register_model(ModelPlugin p) {
    if (p.name.empty() || !p.build) fail("model plugin needs a name and a build function");
    std::string name = p.name;
    registry().add(name, std::move(p));
}

const ModelPlugin &find_model(const std::string &name) { return registry().find(name); }
std::vector<std::string> model_names() { return registry().names(); }
std::string model_unavailable(const ModelPlugin &plugin) { return plugin.unavailable ? plugin.unavailable() : ""; }

void validate_model_config(const ModelConfig &cfg) {
    cfg.validate();
    const ModelPlugin &plugin = find_model(cfg.model);
    if (plugin.validate) plugin.validate(cfg);
}

void require_eval(const ModelConfig &cfg) {
    if (cfg.stochastic) fail("model '", cfg.model, "' supports --mode eval only (no zoneout/dropout)");
}

}  // namespace qrnn
