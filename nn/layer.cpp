#include "nn/layer.h"

#include <algorithm>
#include <map>

#include "core/error.h"

namespace qrnn::nn {

Tensor<float> stacked_state(const std::vector<State> &states, const std::string &name) {
    const Tensor<float> &first = states.at(0).at(name);
    Tensor<float> out({static_cast<int64_t>(states.size()), first.dim(0), first.dim(1)});
    for (size_t l = 0; l < states.size(); l++) set_leading_row(out, static_cast<int64_t>(l), states[l].at(name));
    return out;
}

Tensor<float> &State::at(const std::string &name) {
    return const_cast<Tensor<float> &>(static_cast<const State &>(*this).at(name));
}

const Tensor<float> &State::at(const std::string &name) const {
    auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) fail("layer state has no tensor '", name, "'");
    return tensors[static_cast<size_t>(it - names.begin())];
}

void Layer::zero_grads() {
    for (auto &p : params()) std::fill(p.grad->data.begin(), p.grad->data.end(), 0.0f);
}

namespace {
std::map<std::string, LayerFactory> &factories() {
    static std::map<std::string, LayerFactory> all;
    return all;
}
std::map<std::string, StackFactory> &stack_factories() {
    static std::map<std::string, StackFactory> all;
    return all;
}
}  // namespace

void register_layer_factory(const std::string &model, LayerFactory factory) {
    if (factories().count(model)) fail("a layer factory for model '", model, "' is already registered");
    factories()[model] = std::move(factory);
}

bool has_layer_factory(const std::string &model) {
    return factories().count(model) > 0 || stack_factories().count(model) > 0;
}

void register_stack_factory(const std::string &model, StackFactory factory) {
    if (has_layer_factory(model)) fail("a layer factory for model '", model, "' is already registered");
    stack_factories()[model] = std::move(factory);
}

std::vector<std::unique_ptr<Layer>> make_layers(const ModelConfig &cfg) {
    auto it = stack_factories().find(cfg.model);
    if (it != stack_factories().end()) return it->second(cfg);
    std::vector<std::unique_ptr<Layer>> layers;
    for (int64_t l = 0; l < cfg.layers; l++) layers.push_back(make_layer(cfg, l));
    return layers;
}

std::unique_ptr<Layer> make_layer(const ModelConfig &cfg, int64_t index) {
    auto it = factories().find(cfg.model);
    if (it != factories().end()) return it->second(cfg, index);
    if (stack_factories().count(cfg.model))
        fail("model '", cfg.model, "' trains only as a whole stack (nn::LayerStack(cfg) or nn::make_layers(cfg)), not layer "
             "by layer: its layers read each other's outputs");
    std::string known;
    for (auto &name : layer_stack_models()) known += (known.empty() ? "" : ", ") + name;
    fail("model '", cfg.model, "' is not a stack of trainable layers (those are: ", known.empty() ? "none" : known, ")");
}

std::vector<std::string> layer_stack_models() {
    std::vector<std::string> names;
    for (auto &kv : factories()) names.push_back(kv.first);
    for (auto &kv : stack_factories()) names.push_back(kv.first);
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace qrnn::nn
