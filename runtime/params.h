// Model parameters, recurrent state and training masks of a QRNN stack (shapes: core/layout.h).
#pragma once
#include <vector>

#include "runtime/config.h"
#include "runtime/model_options.h"
#include "runtime/tensor.h"

namespace qrnn {

template <class T>
struct LayerParams {
    Tensor<T> weights;  // [G][k][n_l][m]
    Tensor<T> bias;     // [G][m]
};

template <class T>
struct LayerState {
    Tensor<T> history;  // [max(k-1,1)][B][n_l]: the last k-1 inputs (zeros before the sequence)
    Tensor<T> c;        // [B][m]: cell state after the last step
};

// State carried between calls, so a long sequence fed in pieces gives the same result as whole.
template <class T>
struct StackState {
    std::vector<LayerState<T>> layers;
    int64_t time = 0;  // absolute time of the next step (indexes the training masks)
};

// Mask parameters of one layer for one call; a threshold of 0 disables that mask.
struct LayerMasks {
    uint32_t dropout_key = 0, dropout_threshold = 0;
    double dropout_scale = 1.0;
    uint32_t zoneout_key = 0, zoneout_threshold = 0;
};

// Element-type conversion (e.g. float parameters and state to double for the reference).
template <class To, class From>
LayerParams<To> convert(const LayerParams<From> &p) {
    return {convert<To>(p.weights), convert<To>(p.bias)};
}
template <class To, class From>
std::vector<LayerParams<To>> convert(const std::vector<LayerParams<From>> &layers) {
    std::vector<LayerParams<To>> out;
    for (auto &l : layers) out.push_back(convert<To>(l));
    return out;
}
template <class To, class From>
LayerState<To> convert(const LayerState<From> &s) {
    return {convert<To>(s.history), convert<To>(s.c)};
}
template <class To, class From>
StackState<To> convert(const StackState<From> &s) {
    StackState<To> out;
    out.time = s.time;
    for (auto &l : s.layers) out.layers.push_back(convert<To>(l));
    return out;
}

LayerParams<float> init_layer_params(const QrnnOptions &opt, int64_t layer);  // layer `layer` of init_params
LayerParams<float> init_layer_params(const QrnnOptions &opt, int64_t layer, int64_t input_width);
std::vector<LayerParams<float>> init_params(const ModelConfig &cfg);
// The same with layer l's input width layer_inputs[l] (e.g. the dense stack's n + l*m).
std::vector<LayerParams<float>> init_params(const ModelConfig &cfg, const std::vector<int64_t> &layer_inputs);
Tensor<float> init_input(const ModelConfig &cfg);  // x [T][B][n], uniform in [-1, 1]
// Held-out input of init_input's shape and distribution (another stream): what an int8 run calibrates on.
Tensor<float> calibration_input(const ModelConfig &cfg);
template <class T>
StackState<T> initial_state(const ModelConfig &cfg);
template <class T>
StackState<T> initial_state(const ModelConfig &cfg, const std::vector<int64_t> &layer_inputs);
std::vector<int64_t> layer_inputs(const ModelConfig &cfg);  // cfg.layer_input(l) for every layer
LayerMasks layer_masks(const MaskOptions &opt, int64_t layer);
LayerMasks layer_masks(const ModelConfig &cfg, int64_t layer);  // of mask_options(cfg)

}  // namespace qrnn
