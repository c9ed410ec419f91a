#include "runtime/stack.h"

#include "core/error.h"
#include "runtime/stack_state.h"

namespace qrnn {

QrnnStack::QrnnStack(ModelConfig cfg, std::vector<LayerParams<float>> params, const Knobs &knobs)
    : cfg_(std::move(cfg)), params_(std::move(params)) {
    cfg_.validate();
    if (static_cast<int64_t>(params_.size()) != cfg_.layers)
        fail("got parameters for ", params_.size(), " layers, config has ", cfg_.layers);
    LayerShape shape{cfg_.seq, cfg_.batch, cfg_.input, cfg_.hidden, cfg_.window};
    layer_ = compiled_layer(cfg_.pooling_variant(), cfg_.schedule, knobs, shape, cfg_.target);
}

StackResult QrnnStack::forward(const Tensor<float> &x, StackState<float> &state) {
    if (x.shape.size() != 3 || x.dim(1) != cfg_.batch || x.dim(2) != cfg_.input)
        fail("input x has shape ", x.shape_str(), ", expected [T][", cfg_.batch, "][", cfg_.input, "]");
    if (static_cast<int64_t>(state.layers.size()) != cfg_.layers)
        fail("state has ", state.layers.size(), " layers, config has ", cfg_.layers);
    const int64_t T = x.dim(0), B = cfg_.batch, m = cfg_.hidden;
    h_.resize(cfg_.layers);
    c_.resize(cfg_.layers);
    Tensor<float> c_T({cfg_.layers, B, m});
    const Tensor<float> *input = &x;
    for (int64_t l = 0; l < cfg_.layers; l++) {
        if (h_[l].shape != std::vector<int64_t>{T, B, m}) h_[l] = c_[l] = Tensor<float>({T, B, m});
        LayerState<float> &s = state.layers[l];
        layer_->run({input, &s, &params_[l], layer_masks(cfg_, l), state.time, &h_[l], &c_[l]});
        advance_layer_state(s, *input, c_[l], cfg_.history_rows(), &c_T, l);
        input = &h_[l];
    }
    state.time += T;
    return {h_.back(), std::move(c_T)};
}

double QrnnStack::flops(int64_t T) const {
    const PoolingVariant &v = layer_->variant();
    double total = 0;
    for (int64_t l = 0; l < cfg_.layers; l++)
        total += 2.0 * T * cfg_.batch * v.gate_count() * cfg_.hidden * cfg_.layer_input(l) * cfg_.window +
                 1.0 * T * cfg_.batch * cfg_.hidden * v.flops_per_step;
    return total;
}

}  // namespace qrnn
