#include "plugins/stack_dump.h"

#include "core/error.h"
#include "nn/qrnn_layer.h"
#include "runtime/compare.h"

namespace qrnn {

bool qrnn_shaped(nn::LayerStack &stack, const std::vector<nn::State> &states) {
    for (size_t l = 0; l < stack.size(); l++) {
        auto p = stack.layer(l).params();
        if (p.size() != 2 || p[0].name != "weights" || p[1].name != "bias" ||
            states[l].names != std::vector<std::string>{"history", "c"})
            return false;
    }
    return true;
}

void load_stack_dump(const std::string &path, const ModelConfig &cfg, nn::LayerStack &stack, Tensor<float> &x,
                     std::vector<nn::State> &initial, bool check_finite) {
    if (!qrnn_shaped(stack, initial)) fail("--load: model '", cfg.model, "' is not QRNN-shaped");
    RunData d = read_dump(path, cfg);
    if (check_finite) {
        const std::string in = " (in " + path + ")";
        require_finite(d.x, "input x" + in);
        for (size_t l = 0; l < d.params.size(); l++) {
            const std::string layer = "layer " + std::to_string(l);
            require_finite(d.params[l].weights, layer + " weights" + in);
            require_finite(d.params[l].bias, layer + " bias" + in);
            require_finite(d.state.layers[l].c, layer + " c0" + in);
            require_finite(d.state.layers[l].history, layer + " history" + in);
        }
    }
    x = std::move(d.x);
    for (size_t l = 0; l < stack.size(); l++) {
        auto p = stack.layer(l).params();
        *p[0].value = std::move(d.params[l].weights);
        *p[1].value = std::move(d.params[l].bias);
        initial[l] = nn::make_state(std::move(d.state.layers[l]), 0);
    }
}

RunData stack_run_data(const ModelConfig &cfg, nn::LayerStack &stack, const Tensor<float> &x,
                       const std::vector<nn::State> &initial, const Tensor<float> &y, const std::vector<nn::State> &final) {
    if (!qrnn_shaped(stack, initial)) fail("--dump: model '", cfg.model, "' is not QRNN-shaped");
    RunData d;
    d.x = x, d.h = y;
    d.state.time = initial.at(0).time;
    d.c_T = nn::stacked_state(final, "c");
    for (size_t l = 0; l < stack.size(); l++) {
        auto p = stack.layer(l).params();
        d.params.push_back({*p[0].value, *p[1].value});
        d.state.layers.push_back(nn::layer_state(initial[l]));
    }
    return d;
}

}  // namespace qrnn
