// Sequence-to-sequence on tokens over the encoder-decoder (nn/encoder_decoder.h), and the reproducible
// synthetic transduction task that trains it (issue 11 item 5): reverse a random token sequence.
//   tokens: 0..vocab-1 content, BOS = vocab, EOS = vocab + 1 (symbols = vocab + 2); inputs are one-hot (the
//   first layer's conv weights act as the embedding), outputs a softmax over the symbols from out_t:
//   logits = out_t W_out + b_out, loss = mean cross-entropy over the target tokens (reversed source, EOS).
#pragma once
#include <functional>

#include "nn/adam.h"
#include "nn/encoder_decoder.h"

namespace qrnn::nn {

struct ReversalTask {
    int64_t vocab = 10, min_len = 5, max_len = 40;
    int64_t symbols() const { return vocab + 2; }
    int64_t bos() const { return vocab; }
    int64_t eos() const { return vocab + 1; }
    void validate() const;  // throws qrnn::Error naming a bad value
};

struct Seq2SeqBatch {
    std::vector<std::vector<int64_t>> sources, targets;  // per sequence: tokens; targets = reversed + EOS
    Tensor<float> source;     // [S][B][symbols] one-hot, zeros past each length (S = longest source)
    std::vector<int64_t> lengths;
    Tensor<float> target_in;  // [T][B][symbols] BOS then the target tokens (teacher forcing), T = longest target
};
// Batch `index` of the stream `split` (0: training, 1: held-out) for `seed`: the same arguments, the same batch.
Seq2SeqBatch reversal_batch(const ReversalTask &task, int64_t batch, uint32_t seed, uint32_t split, uint64_t index);

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

}  // namespace qrnn::nn

namespace qrnn::nn {

// The reversal trainer: Adam on seeded training batches until held-out exact-match accuracy reaches the target,
// the time limit or max_steps; evaluated (greedy decoding of eval_size held-out sequences) every eval_every steps.
struct ReversalTraining {
    ReversalTask task;
    int64_t batch = 32, eval_every = 100, eval_size = 256, max_steps = 0;  // max_steps 0: no limit
    double time_limit = 300, target_accuracy = 0.99;                       // seconds
    bool decay = true;  // learning rate decayed linearly over the time limit (to 5% of adam.lr)
    uint32_t seed = 1;
    AdamOptions adam;
    void validate() const;  // throws qrnn::Error naming a bad value
};
struct TrainPoint {
    int64_t step = 0;
    double seconds = 0, loss = 0, accuracy = 0;  // loss: mean of the training losses since the last point
};
std::vector<TrainPoint> train_reversal(const ReversalTraining &opts, Seq2Seq &model,
                                       const std::function<void(const TrainPoint &)> &on_eval);
// Held-out exact-match accuracy of `model` on eval_size sequences of split 1.
double reversal_accuracy(const ReversalTraining &opts, Seq2Seq &model);

}  // namespace qrnn::nn
