// The encoder-decoder QRNN with attention (the paper's translation model, nn/encoder_decoder.h): its
// configuration, parameters and their seeded initialisation, shared by the float model and the double
// reference (reference/encoder_decoder.h).
//
//   encoder: a QRNN stack over the source x [S][B][n_src] (zero initial state), layer l's output e^l [S][B][m];
//            h~^l[b] = e^l[len_b - 1][b] (each sequence's last real step; the conv is causal, so the padding
//            after it changes nothing before it).
//   decoder: a QRNN stack over the target y [T][B][n_tgt] (teacher forcing); layer l's gate pre-activations
//            get + sum_c V_l[g][c][h] * h~^l[b][c] (broadcast over time) before the activations.
//   attention (last decoder layer, its cell states c_t): a_st = softmax_s(c_t . e_s) over s < len_b,
//            k_t = sum_s a_st e_s, out_t = o_t * (W_k k_t + W_c c_t) (o = 1 for pooling f). Without attention
//            the last decoder layer's h is the output.
#pragma once
#include <vector>

#include "runtime/params.h"

namespace qrnn {

struct EncDecConfig {
    ModelConfig encoder;  // layers, input (source width), hidden, window, pooling, schedule, target, masks, seed
    ModelConfig decoder;  // the same but input = the target width; its seed draws the decoder's masks
    bool attention = true;
    int64_t source_len = 0;  // S: padded source length (encoder.seq is ignored)

    // Throws qrnn::Error: a decoder whose layer count or width differs from the encoder's, attention (or a
    // decoder) without an encoder, sizes < 1, different pooling/window/schedule in the two stacks.
    void validate() const;
    int64_t layers() const { return decoder.layers; }
    int64_t hidden() const { return decoder.hidden; }
    std::string describe() const;
};

// An encoder-decoder from one ModelConfig (window, pooling, hidden, layers, masks, seed, schedule, target,
// batch; seq = T) plus the source length and width.
EncDecConfig make_encdec_config(const ModelConfig &base, int64_t source_len, int64_t source_input, bool attention);

template <class T>
struct EncDecParams {
    std::vector<LayerParams<T>> encoder, decoder;
    std::vector<Tensor<T>> condition;  // V_l [G][m][m] per decoder layer: [g][c][h], c the encoder channel
    Tensor<T> attention;               // [2][m][m]: W_k then W_c, [i][c][h]; empty without attention
};

template <class To, class From>
EncDecParams<To> convert(const EncDecParams<From> &p) {
    EncDecParams<To> out{convert<To>(p.encoder), convert<To>(p.decoder), {}, convert<To>(p.attention)};
    for (auto &v : p.condition) out.condition.push_back(convert<To>(v));
    return out;
}

// Seeded: the stacks as init_params, V and W uniform in [-1/sqrt(m), 1/sqrt(m)].
EncDecParams<float> init_encdec_params(const EncDecConfig &cfg);

// Throws qrnn::Error unless there is one length per sequence, each in [1, S].
void check_source_lengths(const std::vector<int64_t> &lengths, int64_t batch, int64_t S);

}  // namespace qrnn
