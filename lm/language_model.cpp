#include "lm/language_model.h"

#include <chrono>

#include "core/error.h"
#include "core/streams.h"
#include "nn/dropout.h"
#include "runtime/seeded_fill.h"
#include "runtime/target.h"

namespace qrnn::lm {
namespace {

Tensor<float> uniform_init(std::vector<int64_t> shape, uint32_t seed, uint32_t stream, double bound) {
    Tensor<float> t(std::move(shape));
    seeded_fill(t, seed, stream, bound);
    return t;
}

double ms_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

LanguageModel::LanguageModel(const LmShape &shape, const RunSettings &run)
    : shape_(shape), stack_(ModelConfig(shape.stack, run)), decoder_(shape.vocab, shape.stack.hidden, parse_target(shape.stack.target), parse_precision(shape.stack.precision)) {
    const int64_t V = shape.vocab, n = shape.stack.input, m = shape.stack.hidden;
    if (V < 2) fail("language model: vocabulary of ", V, " words (need at least 2)");
    if (!(shape.io_dropout >= 0 && shape.io_dropout < 1)) fail("io_dropout must be in [0, 1), got ", shape.io_dropout);
    if (shape.tie_weights && n != m) fail("tie_weights needs emb == hidden, got emb ", n, ", hidden ", m);
    embedding_ = uniform_init({V, n}, shape.stack.seed, streams::kLmEmbedding, 0.1);
    if (!shape.tie_weights) decoder_weights_ = uniform_init({V, m}, shape.stack.seed, streams::kLmDecoder, 0.1);
    decoder_bias_ = Tensor<float>({V});
    d_embedding_ = Tensor<float>({V, n});
    decoder_grads_ = {Tensor<float>({V, m}), Tensor<float>({V})};
    tapes_ = stack_.make_tapes();
    stack_.prepare_training();
    set_stochastic(false);
}

std::vector<nn::Param> LanguageModel::params() {
    std::vector<nn::Param> all{{"embedding", &embedding_, &d_embedding_}};
    for (size_t l = 0; l < stack_.size(); l++)
        for (auto &p : stack_.layer(l).params())
            all.push_back({"layer_" + std::to_string(l) + "/" + p.name, p.value, p.grad});
    if (!shape_.tie_weights) all.push_back({"decoder/weights", &decoder_weights_, &decoder_grads_.dweights});
    all.push_back({"decoder/bias", &decoder_bias_, &decoder_grads_.dbias});
    return all;
}

void LanguageModel::set_stochastic(bool on) {
    stochastic_ = on;
    stack_.set_stochastic(on);
}

void LanguageModel::reset_state(int64_t batch, int64_t time) {
    states_ = stack_.initial_state(batch);
    state_batch_ = batch;
    for (auto &s : states_) s.time = time;
}

StepResult LanguageModel::step(const Batch &batch, bool train) {
    if (states_.empty() || state_batch_ != batch.B) reset_state(batch.B, 0);
    const double p = stochastic_ ? shape_.io_dropout : 0.0;
    const uint32_t seed = shape_.stack.seed;
    const int64_t time = states_.front().time, n = shape_.stack.input, m = shape_.stack.hidden;
    StepResult r;
    r.targets = batch.T * batch.B;
    auto start = std::chrono::steady_clock::now();
    // Buffers are reused from step to step (a fresh 5 MB tensor per step cost page faults and zeroing).
    ensure_shape(x_, {batch.T, batch.B, n});
    embedding_forward(embedding_, batch.inputs, x_);
    nn::apply_dropout(x_, p, seed, 0, time);
    const Tensor<float> &out = stack_.forward(x_, states_, train ? &tapes_ : nullptr);
    const Tensor<float> *h = &out;  // the decoder's input: the stack output, through the dropout when on
    if (p > 0) nn::dropout_into(out, h_, p, seed, 1, time), h = &h_;
    r.rnn_ms = ms_since(start);

    start = std::chrono::steady_clock::now();
    const Tensor<float> &weights = shape_.tie_weights ? embedding_ : decoder_weights_;
    r.loss = decoder_.loss(*h, batch.targets, weights, decoder_bias_, train ? &dh_ : nullptr,
                           train ? &decoder_grads_ : nullptr);
    if (train && shape_.tie_weights) {  // the decoder's share of the embedding's gradient
        float *dw = decoder_grads_.dweights.data.data(), *de = d_embedding_.data.data();
        for (size_t i = 0; i < d_embedding_.size(); i++) de[i] += dw[i], dw[i] = 0.0f;
    }
    r.softmax_ms = ms_since(start);
    if (!train) return r;

    start = std::chrono::steady_clock::now();
    nn::apply_dropout(dh_, p, seed, 1, time);  // the mask's derivative is the mask
    stack_.backward(tapes_, dh_, nullptr, &dx_, nullptr);
    nn::apply_dropout(dx_, p, seed, 0, time);
    embedding_backward(batch.inputs, dx_, d_embedding_);
    r.rnn_ms += ms_since(start);
    return r;
}

}  // namespace qrnn::lm
