#include <algorithm>

#include "core/named_registry.h"
#include "nn/layer.h"
#include "plugins/layer_stack_model.h"
#include "plugins/model.h"
#include "plugins/training_model.h"

namespace qrnn {
namespace {
NamedRegistry<ModelPlugin> &model_plugins() {
    static NamedRegistry<ModelPlugin> models("model");
    return models;
}
}  // namespace

void Model::dump(const std::string &path) { fail("--dump '", path, "': this model does not support HDF5 dumps"); }

void register_model(ModelPlugin p) {
    if (p.layer && p.stack) fail("model '", p.name, "': give a layer factory or a stack factory, not both");
    if (!p.build && (p.layer || p.stack))
        p.build = [verifier = p.inference_verifier](const ModelConfig &cfg, const RunOptions &opts) -> std::unique_ptr<Model> {
            return std::make_unique<LayerStackModel>(cfg, opts, verifier);
        };
    if (p.name.empty() || !p.build) fail("model plugin needs a name and a build function or a layer or stack factory");
    const std::string name = p.name;
    const nn::LayerFactory layer = p.layer;
    const nn::StackFactory stack = p.stack;
    const TrainingVerifier verifier = p.verifier;
    model_plugins().add(name, std::move(p));  // a taken name fails here, before anything else is registered
    if (layer)
        nn::register_layer_factory(name, [name, layer](const ModelConfig &cfg, int64_t index) {
            require_model_available(find_model(name), cfg);
            return layer(cfg, index);
        });
    if (stack) nn::register_stack_factory(name, stack);
    if (verifier) register_training_verifier(name, verifier);
}

const ModelPlugin &find_model(const std::string &name) { return model_plugins().find(name); }

double verify_tolerance(const ModelConfig &cfg) {
    return cfg.precision == "bf16" ? find_model(cfg.model).bf16_tolerance : default_tolerance(cfg);
}

void require_model_available(const ModelPlugin &plugin, const ModelConfig &cfg) {
    const std::string why = model_unavailable(plugin, cfg);
    if (!why.empty()) throw Unavailable("model '" + plugin.name + "' unavailable: " + why);
}
std::vector<std::string> model_names() { return model_plugins().names(); }
std::string model_unavailable(const ModelPlugin &plugin) { return plugin.unavailable ? plugin.unavailable() : ""; }
std::string model_unavailable(const ModelPlugin &plugin, const ModelConfig &cfg) {
    const std::string why = model_unavailable(plugin);
    return why.empty() && plugin.unavailable_for ? plugin.unavailable_for(cfg) : why;
}

bool model_trains(const ModelPlugin &plugin) {
    return static_cast<bool>(plugin.build_training) || nn::has_layer_factory(plugin.name);
}

std::vector<std::string> training_model_names() {
    std::vector<std::string> names;
    for (auto &name : model_names())
        if (model_trains(find_model(name))) names.push_back(name);
    return names;
}

void check_model_precision(const ModelConfig &cfg) {
    if (cfg.precision == "f32") return;
    const ModelPlugin &plugin = find_model(cfg.model);
    auto has = [&](const char *option) { return std::find(plugin.options.begin(), plugin.options.end(), option) != plugin.options.end(); };
    if (cfg.precision == "int8") {
        if (!has("int8")) fail("model '", cfg.model, "' has no int8 path (got --precision int8; docs/int8.md)");
        return;
    }
    if (!has("precision"))
        fail("model '", cfg.model, "' runs in f32", has("int8") ? " or int8" : " only", " (got --precision ", cfg.precision, ")");
    // A model that does not train at all is refused by its missing backward pass (build_training_model) instead.
    if (cfg.training_pass() && model_trains(plugin) && !has("precision-training"))
        fail("model '", cfg.model, "' trains in f32 only (got --precision ", cfg.precision, "; its inference runs in it)");
}

void validate_model_config(const ModelConfig &cfg) {
    cfg.validate();
    check_model_precision(cfg);
    const ModelPlugin &plugin = find_model(cfg.model);
    if (plugin.validate) plugin.validate(cfg);
}

void check_model_memory(const ModelConfig &cfg, const RunOptions &opts) {
    const ModelPlugin &plugin = find_model(cfg.model);
    check_run_memory(cfg, opts.verify, opts.max_memory, plugin.memory ? plugin.memory(cfg) : MemoryShape{});
}

void require_eval(const ModelConfig &cfg) {
    if (cfg.stochastic) fail("model '", cfg.model, "' supports --mode eval only (no zoneout/dropout)");
}

}  // namespace qrnn
