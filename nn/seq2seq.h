// Sequence-to-sequence on tokens over the encoder-decoder (nn/encoder_decoder.h), for the synthetic
// transduction tasks (nn/seq_tasks.h: reverse or sort a token sequence; trained by `qrnn train --task
// reverse|sort`, tasks/seq_trainer.h):
//   tokens: 0..vocab-1 content, BOS = vocab, EOS = vocab + 1 (symbols = vocab + 2); inputs are one-hot (the
//   first layer's conv weights act as the embedding), outputs a softmax over the symbols from out_t:
//   logits = out_t W_out + b_out, loss = mean cross-entropy over the target tokens (transformed source, EOS).
#pragma once
#include <functional>

#include "nn/encoder_decoder.h"
#include "nn/seq_tasks.h"

namespace qrnn::nn {

class Seq2Seq {
public:
    Seq2Seq(const EncDecConfig &cfg, int64_t symbols);  // cfg's inputs must be `symbols` wide
    EncoderDecoder &net() { return net_; }
    // Forward with tape, loss, backward: every gradient of the mean cross-entropy (zeroed first). Returns the loss.
    double loss_and_grads(const Seq2SeqBatch &batch);
    // Greedy decoding from BOS until EOS or max_steps per sequence (the EOS not included). alpha, when non-null,
    // gets each step's attention weights [B][steps][S].
    std::vector<std::vector<int64_t>> greedy_decode(const Tensor<float> &source, const std::vector<int64_t> &lengths,
                                                    int64_t bos, int64_t eos, int64_t max_steps,
                                                    Tensor<float> *alpha = nullptr);
    std::vector<Param> params();  // the network's, then "output/weights" [m][symbols], "output/bias" [symbols]

private:
    Tensor<float> logits(const Tensor<float> &out) const;  // [T][B][symbols]
    EncoderDecoder net_;
    int64_t symbols_;
    Tensor<float> w_, b_, dw_, db_;
    EncDecTape tape_;
};

// Fraction of sequences decoded exactly (same tokens, same length).
double exact_match(const std::vector<std::vector<int64_t>> &decoded, const std::vector<std::vector<int64_t>> &expected);

// Held-out exact match (greedy decoding) of `model` on eval_size sequences of split 1 of `task`, in batches of 64.
// With `stop`: asked after each batch; when it says true the evaluation ends there, over the sequences evaluated
// (their count in *evaluated, when given).
double transduction_accuracy(const TransductionTask &task, Seq2Seq &model, uint32_t seed, int64_t eval_size,
                             const std::function<bool()> &stop = nullptr, int64_t *evaluated = nullptr);

}  // namespace qrnn::nn
