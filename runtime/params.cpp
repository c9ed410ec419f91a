#include "runtime/params.h"

#include <cmath>

#include "core/hash_rng.h"
#include "core/pooling.h"
#include "core/streams.h"

namespace qrnn {

// Seeded fill: element i of tensor `stream` gets hash_uniform(hash(key(seed, stream), i)).
static void fill_uniform(Tensor<float> &t, uint32_t seed, uint32_t stream, double bound) {
    uint32_t key = stream_key(seed, stream);
    for (size_t i = 0; i < t.size(); i++)
        t.data[i] = static_cast<float>(hash_uniform(hash_at<uint32_t>(key, 0, 0, static_cast<uint32_t>(i)), -bound, bound));
}

// Streams: core/streams.h.
LayerParams<float> init_layer_params(const QrnnOptions &opt, int64_t l, int64_t n) {
    const int64_t G = opt.pooling->gate_count();
    LayerParams<float> p{Tensor<float>({G, opt.window, n, opt.hidden}), Tensor<float>({G, opt.hidden})};
    double bound = 1.0 / std::sqrt(static_cast<double>(n * opt.window));
    fill_uniform(p.weights, opt.seed, streams::qrnn_weights(static_cast<uint32_t>(l)), bound);
    fill_uniform(p.bias, opt.seed, streams::qrnn_bias(static_cast<uint32_t>(l)), bound);
    return p;
}

LayerParams<float> init_layer_params(const QrnnOptions &opt, int64_t l) { return init_layer_params(opt, l, opt.layer_input(l)); }

std::vector<int64_t> layer_inputs(const ModelConfig &cfg) {
    std::vector<int64_t> widths;
    for (int64_t l = 0; l < cfg.layers; l++) widths.push_back(cfg.layer_input(l));
    return widths;
}

std::vector<LayerParams<float>> init_params(const ModelConfig &cfg) { return init_params(cfg, layer_inputs(cfg)); }

std::vector<LayerParams<float>> init_params(const ModelConfig &cfg, const std::vector<int64_t> &widths) {
    std::vector<LayerParams<float>> layers;
    const QrnnOptions opt = qrnn_options(cfg);
    for (int64_t l = 0; l < static_cast<int64_t>(widths.size()); l++) layers.push_back(init_layer_params(opt, l, widths[l]));
    return layers;
}

Tensor<float> init_input(const ModelConfig &cfg) {
    Tensor<float> x({cfg.seq, cfg.batch, cfg.input});
    fill_uniform(x, cfg.seed, streams::kBenchInput, 1.0);
    return x;
}

Tensor<float> calibration_input(const ModelConfig &cfg) {
    Tensor<float> x({cfg.seq, cfg.batch, cfg.input});
    fill_uniform(x, cfg.seed, streams::kInt8Calibration, 1.0);
    return x;
}

template <class T>
StackState<T> initial_state(const ModelConfig &cfg) {
    return initial_state<T>(cfg, layer_inputs(cfg));
}

template <class T>
StackState<T> initial_state(const ModelConfig &cfg, const std::vector<int64_t> &widths) {
    StackState<T> s;
    for (int64_t n : widths)
        s.layers.push_back({Tensor<T>({std::max<int64_t>(cfg.history_rows(), 1), cfg.batch, n}), Tensor<T>({cfg.batch, cfg.hidden})});
    return s;
}
template StackState<float> initial_state<float>(const ModelConfig &);
template StackState<double> initial_state<double>(const ModelConfig &);
template StackState<float> initial_state<float>(const ModelConfig &, const std::vector<int64_t> &);
template StackState<double> initial_state<double>(const ModelConfig &, const std::vector<int64_t> &);

LayerMasks layer_masks(const ModelConfig &cfg, int64_t layer) { return layer_masks(mask_options(cfg), layer); }

// The key of mask stream `stream`: draw 0 is stream_key(seed, stream) (core/layout.h); another draw re-keys it.
static uint32_t mask_key(const MaskOptions &opt, uint32_t stream) { return drawn_key(stream_key(opt.seed, stream), opt.mask_draw); }

LayerMasks layer_masks(const MaskOptions &opt, int64_t layer) {
    LayerMasks m;
    if (!opt.stochastic) return m;
    uint32_t l = static_cast<uint32_t>(layer);
    if (layer > 0 && opt.dropout > 0) {
        m.dropout_key = mask_key(opt, streams::qrnn_dropout(l));
        m.dropout_threshold = drop_threshold(opt.dropout);
        m.dropout_scale = 1.0 / (1.0 - opt.dropout);
    }
    if (opt.zoneout > 0) {
        m.zoneout_key = mask_key(opt, streams::qrnn_zoneout(l));
        m.zoneout_threshold = drop_threshold(opt.zoneout);
    }
    return m;
}

}  // namespace qrnn
