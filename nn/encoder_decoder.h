// The paper's encoder-decoder QRNN with attention in float (runtime/encdec_config.h has the equations):
// encoder and decoder stacks of nn::QrnnLayer (the decoder's built with a conditioning bias input, the last
// one with h = c and its output gate left to the attention), the conditioning V_l h~^l and its gradients through
// runtime/compiled_condition.h, attention through runtime/compiled_attention.h.
// Checked against reference/encoder_decoder.h in tests/test_encoder_decoder.cpp.
#pragma once
#include "nn/qrnn_layer.h"
#include "nn/stack.h"
#include "runtime/compiled_attention.h"
#include "runtime/compiled_condition.h"
#include "runtime/encdec_config.h"

namespace qrnn::nn {

// What a forward saved for the backward (and the attention weights, for a heatmap).
struct EncDecTape {
    Tapes encoder, decoder;
    std::vector<Tensor<float>> encoder_out;  // [S][B][m] per encoder layer
    std::vector<Tensor<float>> decoder_out;  // [T][B][m] per decoder layer
    std::vector<Tensor<float>> final_state;  // h~^l [B][m]
    std::vector<int64_t> lengths;
    Tensor<float> cell, gate_o;  // the last decoder layer's c and o [T][B][m] (with attention)
    AttentionTape attention;
    bool recorded = false;
};

// The encoder's summary of a source batch, what decoding reads (decode_step).
struct Encoded {
    std::vector<Tensor<float>> batch_bias;  // V_l h~^l as [G][B][m]
    Tensor<float> last_out;                 // [S][B][m] of the last encoder layer
    std::vector<int64_t> lengths;
};

class EncoderDecoder {
public:
    explicit EncoderDecoder(const EncDecConfig &cfg);  // parameters from init_encdec_params(cfg)
    const EncDecConfig &config() const { return cfg_; }
    void set_stochastic(bool on);
    void set_mask_draw(uint64_t draw);  // of every layer (nn::Layer::set_mask_draw)
    EncDecParams<float> parameters() const;        // copies
    void set_parameters(const EncDecParams<float> &p);

    // out [T][B][m] from source [S][B][n_src] with lengths (each in [1, S]) and target [T][B][n_tgt] (teacher
    // forcing), zero initial states. With a tape, saves what backward needs.
    const Tensor<float> &forward(const Tensor<float> &source, const std::vector<int64_t> &lengths,
                                 const Tensor<float> &target, EncDecTape *tape);
    // From dout [T][B][m]: accumulates every parameter's gradient; writes dsource / dtarget when non-null.
    void backward(const EncDecTape &tape, const Tensor<float> &dout, Tensor<float> *dsource, Tensor<float> *dtarget);

    // Step-by-step decoding (greedy inference): encode once, then feed the target a step at a time.
    Encoded encode(const Tensor<float> &source, const std::vector<int64_t> &lengths);
    std::vector<State> decoder_state(int64_t batch) const;
    // out [T'][B][m] for target steps [T'][B][n_tgt] continuing from `states` (advanced). alpha, when non-null,
    // gets the attention weights [B][T'][S].
    void decode(const Encoded &enc, const Tensor<float> &target, std::vector<State> &states, Tensor<float> &out,
                Tensor<float> *alpha = nullptr);

    std::vector<Param> params();  // named "encoder_<l>/weights", ..., "condition_<l>", "attention"
    void zero_grads();
    double flops(int64_t S, int64_t T, int64_t B) const;  // one forward

private:
    Encoded encode_into(const Tensor<float> &source, const std::vector<int64_t> &lengths, EncDecTape *tape);
    void decode_into(const Encoded &enc, const Tensor<float> &target, std::vector<State> &states, Tensor<float> &out,
                     EncDecTape &tape);
    void attend(const Tensor<float> &cell, const Tensor<float> &gate_o, const Encoded &enc, Tensor<float> &out,
                AttentionTape &tape);
    void gate_o(const Tape &last_tape, int64_t T, int64_t B, Tensor<float> &out) const;

    EncDecConfig cfg_;
    int64_t G_;
    bool has_o_;
    std::vector<std::unique_ptr<QrnnLayer>> encoder_, decoder_;
    std::vector<Tensor<float>> condition_, condition_grad_;
    Tensor<float> attention_, attention_grad_;
    std::shared_ptr<CompiledAttention> compiled_attention_;
    std::shared_ptr<CompiledCondition> compiled_condition_;
    Tensor<float> out_;
    EncDecTape scratch_;  // forward without a tape
    // The backward's work tensors, kept from step to step (each keeps its shape: nothing is reallocated).
    struct BackwardScratch {
        AttentionGradsF attention;
        Tensor<float> dgates, de, dbias, dV;
        std::vector<Tensor<float>> dfinal, decoder_dx, encoder_dx;  // per layer
    } back_;
};

}  // namespace qrnn::nn
