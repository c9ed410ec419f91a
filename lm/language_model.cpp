#include "lm/language_model.h"

#include <chrono>

#include "core/error.h"
#include "core/hash_rng.h"

namespace qrnn::lm {
namespace {

// Streams of the model's own hash draws, apart from the layers' (2l, 2l+1).
constexpr uint32_t kInitStream = 0x10000, kDropoutStream = 0x20000;

Tensor<float> uniform_init(std::vector<int64_t> shape, uint32_t seed, uint32_t stream, double bound) {
    Tensor<float> t(std::move(shape));
    const uint32_t key = stream_key(seed, kInitStream + stream);
    for (size_t i = 0; i < t.size(); i++)
        t.data[i] = static_cast<float>(hash_uniform(hash_at<uint32_t>(key, 0, 0, static_cast<uint32_t>(i)), -bound, bound));
    return t;
}

double ms_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

namespace {
// The inverted-dropout row: dst[c] = src[c] * scale where hash_at(key, t, b, c) >= threshold, else 0 (the row's
// part of the hash computed once). Compiled for AVX-512 and AVX2 besides the baseline, the CPU picks at load
// time (GCC target_clones: never an ISA the CPU lacks); the hash is integer arithmetic, so every clone gives
// the same bits.
__attribute__((target_clones("avx512f", "avx2", "default")))
void dropout_row(const float *src, float *dst, int64_t C, uint32_t row_key, uint32_t threshold, float scale) {
    for (int64_t c = 0; c < C; c++) {
        const uint32_t h = mix32<uint32_t>(static_cast<uint32_t>(c) ^ row_key);
        dst[c] = h >= threshold ? src[c] * scale : 0.0f;
    }
}
}  // namespace

void dropout_into(const Tensor<float> &x, Tensor<float> &out, double p, uint32_t seed, uint32_t stream, int64_t time) {
    if (&out != &x) ensure_shape(out, x.shape);
    if (p <= 0) {
        if (&out != &x) out.data = x.data;
        return;
    }
    const int64_t T = x.dim(0), B = x.dim(1), C = x.dim(2);
    const uint32_t key = stream_key(seed, kDropoutStream + stream), threshold = drop_threshold(p);
    const float scale = static_cast<float>(1.0 / (1.0 - p));
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < B; b++) {
            // hash_at(key, t, b, c) = mix32(c ^ mix32(b ^ mix32(t ^ key))): the row's part once.
            const uint32_t row_key = mix32<uint32_t>(static_cast<uint32_t>(b) ^ mix32<uint32_t>(static_cast<uint32_t>(time + t) ^ key));
            dropout_row(&x.data[(t * B + b) * C], &out.data[(t * B + b) * C], C, row_key, threshold, scale);
        }
}

void apply_dropout(Tensor<float> &x, double p, uint32_t seed, uint32_t stream, int64_t time) {
    dropout_into(x, x, p, seed, stream, time);
}

LanguageModel::LanguageModel(const LmShape &shape)
    : shape_(shape), stack_(shape.stack), decoder_(shape.vocab, shape.stack.hidden, shape.stack.target) {
    const int64_t V = shape.vocab, n = shape.stack.input, m = shape.stack.hidden;
    if (V < 2) fail("language model: vocabulary of ", V, " words (need at least 2)");
    if (!(shape.io_dropout >= 0 && shape.io_dropout < 1)) fail("io_dropout must be in [0, 1), got ", shape.io_dropout);
    if (shape.tie_weights && n != m) fail("tie_weights needs emb == hidden, got emb ", n, ", hidden ", m);
    embedding_ = uniform_init({V, n}, shape.stack.seed, 0, 0.1);
    if (!shape.tie_weights) decoder_weights_ = uniform_init({V, m}, shape.stack.seed, 1, 0.1);
    decoder_bias_ = Tensor<float>({V});
    d_embedding_ = Tensor<float>({V, n});
    decoder_grads_ = {Tensor<float>({V, m}), Tensor<float>({V})};
    tapes_ = stack_.make_tapes();
    drops_between_ = shape.stack.model != "qrnn" && shape.stack.dropout > 0;
    inputs_.resize(stack_.size()), outputs_.resize(stack_.size()), input_grads_.resize(stack_.size());
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
    apply_dropout(x_, p, seed, 0, time);
    // The stack, layer by layer (as nn::LayerStack does), with the between-layer dropout of maskless layers.
    const double between = stochastic_ && drops_between_ ? shape_.stack.dropout : 0.0;
    const Tensor<float> *input = &x_;
    for (size_t l = 0; l < stack_.size(); l++) {
        if (l > 0 && between > 0) {
            dropout_into(*input, inputs_[l], between, seed, 2 + static_cast<uint32_t>(l), time);
            input = &inputs_[l];
        }
        stack_.layer(l).forward(*input, states_[l], outputs_[l], train ? tapes_[l].get() : nullptr);
        input = &outputs_[l];
    }
    const Tensor<float> *h = input;  // the decoder's input: the stack output, through the dropout when on
    if (p > 0) dropout_into(*input, h_, p, seed, 1, time), h = &h_;
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
    apply_dropout(dh_, p, seed, 1, time);  // the mask's derivative is the mask
    const Tensor<float> *d_out = &dh_;
    for (size_t l = stack_.size(); l-- > 0;) {
        stack_.layer(l).backward(*tapes_[l], *d_out, nullptr, &input_grads_[l], nullptr);
        if (l > 0 && between > 0) apply_dropout(input_grads_[l], between, seed, 2 + static_cast<uint32_t>(l), time);
        d_out = &input_grads_[l];
    }
    const Tensor<float> *dx = d_out;
    if (p > 0) dropout_into(*d_out, dx_, p, seed, 0, time), dx = &dx_;
    embedding_backward(batch.inputs, *dx, d_embedding_);
    r.rnn_ms += ms_since(start);
    return r;
}

}  // namespace qrnn::lm
