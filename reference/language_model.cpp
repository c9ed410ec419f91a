#include "reference/language_model.h"

#include "reference/baselines_backward.h"
#include "reference/qrnn_backward.h"
#include "reference/softmax_decoder.h"

namespace qrnn::ref {
namespace {

Tensor<double> times(Tensor<double> v, const Tensor<double> &mask) {
    for (size_t i = 0; i < v.size(); i++) v.data[i] *= mask.data[i];
    return v;
}

Tensor<double> reshaped(Tensor<double> v, std::vector<int64_t> dims) {
    v.shape = std::move(dims);
    return v;
}

// Everything the forward computes that the backward reads.
struct Trace {
    Tensor<double> x;                    // [T][B][n] masked embedding output
    std::vector<Tensor<double>> inputs;  // LSTM: each layer's (masked) input
    Tensor<double> h;                    // [T][B][m] masked stack output
};

Trace forward(const LmBatch &in, const LmParams &p) {
    Trace t;
    const int64_t n = p.embedding.dim(1);
    t.x = times(reshaped(embedding_forward(p.embedding, in.tokens), {in.T, in.B, n}), in.in_mask);
    Tensor<double> h;
    if (!p.qrnn.empty()) {
        StackState<double> state = in.qrnn_state;
        h = stack_forward(in.cfg, p.qrnn, t.x, state).h;
    } else {
        h = t.x;
        for (size_t l = 0; l < p.lstm.size(); l++) {
            if (l > 0 && !in.between.empty()) h = times(h, in.between[l - 1]);
            t.inputs.push_back(h);
            h = lstm_forward(h, p.lstm[l], leading_row(in.h0, l), leading_row(in.c0, l)).h;
        }
    }
    t.h = times(h, in.out_mask);
    return t;
}

const Tensor<double> &decoder_weights(const LmParams &p) {
    return p.decoder_weights.size() ? p.decoder_weights : p.embedding;
}

}  // namespace

double lm_loss(const LmBatch &in, const LmParams &p) {
    const Trace t = forward(in, p);
    return softmax_decoder(t.h, in.targets, decoder_weights(p), p.decoder_bias, false).loss;
}

LmParams lm_gradients(const LmBatch &in, const LmParams &p) {
    const Trace t = forward(in, p);
    const DecoderResult dec = softmax_decoder(t.h, in.targets, decoder_weights(p), p.decoder_bias, true);
    const int64_t V = p.embedding.dim(0), m = t.h.dim(2);
    LmParams g;
    g.decoder_bias = dec.dbias;
    Tensor<double> d = times(reshaped(dec.dh, {in.T, in.B, m}), in.out_mask);
    if (!p.qrnn.empty()) {
        const int64_t L = static_cast<int64_t>(p.qrnn.size());
        const StackGrads s = stack_backward(in.cfg, p.qrnn, t.x, in.qrnn_state, d, Tensor<double>({L, in.B, m}));
        for (auto &layer : s.layers) g.qrnn.push_back({layer.dweights, layer.dbias});
        d = s.dx;
    } else {
        const Tensor<double> zero({in.B, m});
        g.lstm.resize(p.lstm.size());
        for (size_t l = p.lstm.size(); l-- > 0;) {
            LstmGrads lg = lstm_backward(t.inputs[l], p.lstm[l], leading_row(in.h0, l), leading_row(in.c0, l), d, zero, zero);
            g.lstm[l] = lg.params;
            d = l > 0 && !in.between.empty() ? times(lg.dx, in.between[l - 1]) : lg.dx;
        }
    }
    d = times(d, in.in_mask);
    g.embedding = embedding_backward(in.tokens, reshaped(d, {in.T * in.B, d.dim(2)}), V);
    if (p.decoder_weights.size()) g.decoder_weights = dec.dweights;
    else
        for (size_t i = 0; i < g.embedding.size(); i++) g.embedding.data[i] += dec.dweights.data[i];
    return g;
}

}  // namespace qrnn::ref
