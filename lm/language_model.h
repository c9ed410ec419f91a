// Word-level language model: embedding -> stack of any trainable layers (nn::LayerStack: qrnn, lstm-onednn,
// lstm-halide, cnn) -> dropout -> linear decoder with softmax cross-entropy (lm/softmax_decoder.h).
// Dropout `io_dropout` acts on the embedding output and on the stack output (inverted, hash masks of
// (seed, step, stream, channel) as the layers' own, so a run is reproducible); `zoneout` and `dropout`
// (between layers) come with the ModelConfig: QRNN layers apply both themselves; for layers without masks
// (LSTM, CNN) nn::LayerStack applies the between-layer dropout, so that every model gets the same regularisation.
// With `tie_weights` the decoder's weights are the embedding table (Press & Wolf 2017; needs emb == hidden):
// one [V][m] matrix fewer, whose gradient is the sum of both uses.
#pragma once
#include <memory>

#include "lm/trainable_model.h"
#include "lm/softmax_decoder.h"
#include "nn/stack.h"

namespace qrnn::lm {

struct LmShape {
    ModelSpec stack;       // model, pooling, window, input (= embedding size), hidden, layers, rates, seed
    int64_t vocab = 0;
    double io_dropout = 0;
    bool tie_weights = false;
};

class LanguageModel : public TrainableModel {
public:
    // run: the batch and bptt its layers are built for (what a layer compiles per shape uses them).
    LanguageModel(const LmShape &shape, const RunSettings &run);
    std::vector<nn::Param> params() override;
    void set_stochastic(bool on) override;
    void reset_state(int64_t batch, int64_t time) override;
    std::vector<nn::State> &carried_state() override { return states_; }
    StepResult step(const Batch &batch, bool train) override;

private:
    LmShape shape_;
    nn::LayerStack stack_;
    SoftmaxDecoder decoder_;
    Tensor<float> embedding_, d_embedding_;   // [V][n]
    DecoderGrads decoder_grads_;
    Tensor<float> decoder_weights_, decoder_bias_;  // [V][m] (empty when tied), [V]
    std::vector<nn::State> states_;
    int64_t state_batch_ = 0;  // the streams states_ holds (set by reset_state)
    nn::Tapes tapes_;
    bool stochastic_ = false;
    Tensor<float> x_, dx_, h_, dh_;
};

}  // namespace qrnn::lm
