#include "reference/dense.h"

namespace qrnn::ref {
namespace {
// Every layer's concatenated input and output of a forward from `state` (advanced).
struct DenseTrace {
    std::vector<Tensor<double>> inputs;
    std::vector<LayerOutput> outputs;
};

DenseTrace dense_trace(const ModelConfig &cfg, const std::vector<LayerParams<double>> &params, const Tensor<double> &x,
                       StackState<double> &state) {
    const PoolingVariant &variant = cfg.pooling_variant();
    const Precision precision = parse_precision(cfg.precision);
    DenseTrace tr;
    std::vector<const Tensor<double> *> pieces{&x};
    tr.outputs.reserve(cfg.layers);
    for (int64_t l = 0; l < cfg.layers; l++) {
        tr.inputs.push_back(concat_channels(pieces));
        LayerState<double> &s = state.layers[l];
        tr.outputs.push_back(layer_forward(variant, tr.inputs[l], s, params[l], layer_masks(cfg, l), state.time, precision));
        pieces.push_back(&tr.outputs[l].h);
    }
    return tr;
}
}  // namespace

std::vector<int64_t> dense_layer_inputs(const ModelConfig &cfg) {
    std::vector<int64_t> widths;
    for (int64_t l = 0; l < cfg.layers; l++) widths.push_back(cfg.input + l * cfg.hidden);
    return widths;
}

Tensor<double> concat_channels(const std::vector<const Tensor<double> *> &pieces) {
    const int64_t T = pieces.at(0)->dim(0), B = pieces[0]->dim(1);
    int64_t width = 0;
    for (auto *p : pieces) width += p->dim(2);
    Tensor<double> out({T, B, width});
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < B; b++) {
            int64_t first = 0;
            for (auto *p : pieces) {
                for (int64_t c = 0; c < p->dim(2); c++) out(t, b, first + c) = (*p)(t, b, c);
                first += p->dim(2);
            }
        }
    return out;
}

StackOutput dense_forward(const ModelConfig &cfg, const std::vector<LayerParams<double>> &params, const Tensor<double> &x,
                          StackState<double> &state) {
    const int64_t T = x.dim(0), B = x.dim(1), m = cfg.hidden;
    DenseTrace tr = dense_trace(cfg, params, x, state);
    StackOutput out{tr.outputs.back().h, Tensor<double>({cfg.layers, B, m})};
    for (int64_t l = 0; l < cfg.layers; l++) {
        LayerState<double> &s = state.layers[l];
        s.history = next_history(s.history, tr.inputs[l], cfg.history_rows());
        for (int64_t b = 0; b < B; b++)
            for (int64_t h = 0; h < m; h++) out.c_T(l, b, h) = s.c(b, h) = tr.outputs[l].c(T - 1, b, h);
    }
    state.time += T;
    return out;
}

// Backward in reverse layer order; d_cat accumulates the gradient of every piece of the widest concatenation
// (x, h_0 .. h_{L-2}): layer l's output gradient is its slice (plus dh for the last layer), and layer l's
// input gradient is added to the prefix it read.
StackGrads dense_backward(const ModelConfig &cfg, const std::vector<LayerParams<double>> &params, const Tensor<double> &x,
                          const StackState<double> &state, const Tensor<double> &dh, const Tensor<double> &dc_T) {
    const PoolingVariant &variant = cfg.pooling_variant();
    const int64_t T = x.dim(0), B = x.dim(1), n = x.dim(2), m = cfg.hidden, L = cfg.layers;
    const Precision precision = parse_precision(cfg.precision);
    StackState<double> forward_state = state;
    DenseTrace tr = dense_trace(cfg, params, x, forward_state);
    Tensor<double> d_cat({T, B, n + (L - 1) * m});
    StackGrads out;
    out.layers.resize(L);
    for (int64_t l = L - 1; l >= 0; l--) {
        Tensor<double> d_out = dh;
        if (l < L - 1)
            for (int64_t t = 0; t < T; t++)
                for (int64_t b = 0; b < B; b++)
                    for (int64_t h = 0; h < m; h++) d_out(t, b, h) = d_cat(t, b, n + l * m + h);
        out.layers[l] = layer_backward(variant, tr.inputs[l], state.layers[l], params[l], layer_masks(cfg, l), state.time,
                                       d_out, leading_row(dc_T, l), precision);
        const Tensor<double> &dx = out.layers[l].dx;
        for (int64_t t = 0; t < T; t++)
            for (int64_t b = 0; b < B; b++)
                for (int64_t c = 0; c < dx.dim(2); c++) d_cat(t, b, c) += dx(t, b, c);
    }
    out.dx = Tensor<double>({T, B, n});
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < B; b++)
            for (int64_t c = 0; c < n; c++) out.dx(t, b, c) = d_cat(t, b, c);
    return out;
}

}  // namespace qrnn::ref
