#include "tasks/seq_classifier.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/streams.h"
#include "nn/seq_layer.h"
#include "runtime/seeded_fill.h"

namespace qrnn::lm {
namespace {
}

SequenceClassifier::SequenceClassifier(const ClassifierShape &shape, const RunSettings &run)
    : shape_(shape), stack_(ModelConfig(shape.stack, run)), has_lengths_(nn::is_seq_model(shape.stack.model)),
      width_(stack_.layer(stack_.size() - 1).output_size()), decoder_(shape.classes, width_, parse_target(shape.stack.target)) {
    if (shape.pool != "mean" && shape.pool != "last") fail("pool must be mean or last (got '", shape.pool, "')");
    if (shape.vocab < 1 || shape.classes < 2) fail("classifier: vocab ", shape.vocab, ", classes ", shape.classes);
    const int64_t n = shape.stack.input;
    embedding_ = Tensor<float>({shape.vocab, n}), d_embedding_ = Tensor<float>(embedding_.shape);
    seeded_fill(embedding_, shape.stack.seed, streams::kClassifierEmbedding, 0.1);
    weights_ = Tensor<float>({shape.classes, width_}), bias_ = Tensor<float>({shape.classes});
    seeded_fill(weights_, shape.stack.seed, streams::kClassifierOutput, 1.0 / std::sqrt(static_cast<double>(width_)));
    grads_ = {Tensor<float>(weights_.shape), Tensor<float>(bias_.shape)};
    tapes_ = stack_.make_tapes();
    stack_.prepare_training();
}

std::vector<nn::Param> SequenceClassifier::params() {
    std::vector<nn::Param> all{{"embedding", &embedding_, &d_embedding_}};
    for (size_t l = 0; l < stack_.size(); l++)
        for (auto &p : stack_.layer(l).params()) all.push_back({"layer_" + std::to_string(l) + "/" + p.name, p.value, p.grad});
    all.push_back({"output/weights", &weights_, &grads_.dweights});
    all.push_back({"output/bias", &bias_, &grads_.dbias});
    return all;
}

const Tensor<float> &SequenceClassifier::pooled(const nn::ClassifyBatch &batch, bool tape) {
    const int64_t T = batch.T, B = static_cast<int64_t>(batch.lengths.size()), n = shape_.stack.input, m = width_;
    x_ = Tensor<float>({T, B, n});
    embedding_forward(embedding_, batch.tokens, x_);
    for (int64_t b = 0; b < B; b++)
        for (int64_t t = batch.lengths[b]; t < T; t++) std::fill_n(&x_(t, b, 0), n, 0.0f);
    if (has_lengths_) nn::set_stack_lengths(stack_, std::vector<int32_t>(batch.lengths.begin(), batch.lengths.end()));
    std::vector<nn::State> states = stack_.initial_state(B);
    const Tensor<float> &h = stack_.forward(x_, states, tape ? &tapes_ : nullptr);
    pooled_ = Tensor<float>({B, m});
    for (int64_t b = 0; b < B; b++) {
        const int64_t len = batch.lengths[b], first = shape_.pool == "mean" ? 0 : len - 1;
        const float scale = 1.0f / static_cast<float>(len - first);
        for (int64_t t = first; t < len; t++)
            for (int64_t c = 0; c < m; c++) pooled_(b, c) += h(t, b, c) * scale;
    }
    return pooled_;
}

double SequenceClassifier::loss(const nn::ClassifyBatch &batch, bool train) {
    const int64_t T = batch.T, B = static_cast<int64_t>(batch.lengths.size()), m = width_;
    if (train) {
        stack_.zero_grads();
        for (Tensor<float> *g : {&d_embedding_, &grads_.dweights, &grads_.dbias}) std::fill(g->data.begin(), g->data.end(), 0.0f);
    }
    const Tensor<float> &p = pooled(batch, train);
    dpooled_ = Tensor<float>(p.shape);
    const double sum = decoder_.loss(p, batch.labels, weights_, bias_, train ? &dpooled_ : nullptr, train ? &grads_ : nullptr);
    if (!train) return sum / static_cast<double>(B);
    // The decoder's gradients are of the sum: scale to the mean, then spread dpooled over the pooled steps.
    const float inv_b = 1.0f / static_cast<float>(B);
    for (Tensor<float> *g : {&grads_.dweights, &grads_.dbias})
        for (float &v : g->data) v *= inv_b;
    dh_ = Tensor<float>({T, B, m});
    for (int64_t b = 0; b < B; b++) {
        const int64_t len = batch.lengths[b], first = shape_.pool == "mean" ? 0 : len - 1;
        const float scale = inv_b / static_cast<float>(len - first);
        for (int64_t t = first; t < len; t++)
            for (int64_t c = 0; c < m; c++) dh_(t, b, c) = dpooled_(b, c) * scale;
    }
    stack_.backward(tapes_, dh_, nullptr, &dx_, nullptr);
    embedding_backward(batch.tokens, dx_, d_embedding_);
    return sum / static_cast<double>(B);
}

std::vector<int32_t> SequenceClassifier::predict(const nn::ClassifyBatch &batch) {
    const Tensor<float> &p = pooled(batch, false);
    const int64_t B = p.dim(0), C = shape_.classes;
    std::vector<int32_t> out(B);
    std::vector<double> z(C);
    for (int64_t b = 0; b < B; b++) {
        for (int64_t c = 0; c < C; c++) {
            z[c] = bias_(c);
            for (int64_t h = 0; h < width_; h++) z[c] += static_cast<double>(weights_(c, h)) * p(b, h);
        }
        out[b] = static_cast<int32_t>(std::max_element(z.begin(), z.end()) - z.begin());
    }
    return out;
}

}  // namespace qrnn::lm
