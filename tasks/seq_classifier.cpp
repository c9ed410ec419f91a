#include "tasks/seq_classifier.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/streams.h"
#include "nn/seq_layer.h"
#include "runtime/seeded_fill.h"

namespace qrnn::lm {
namespace {

nn::ProjectionConfig projection_config(const ClassifierShape &shape) {
    if (shape.front == "projection" && (shape.projection_features < 1 || shape.projection_features > nn::kMaxProjectionFeatures))
        fail("projection features must be in [1, ", nn::kMaxProjectionFeatures, "] (got ", shape.projection_features, ")");
    return {static_cast<int>(std::clamp<int64_t>(shape.projection_features, 1, nn::kMaxProjectionFeatures)), shape.projection_seed};
}

}  // namespace

SequenceClassifier::SequenceClassifier(const ClassifierShape &shape, const RunSettings &run)
    : shape_(shape), stack_(ModelConfig(shape.stack, run)), has_lengths_(nn::is_seq_model(shape.stack.model)),
      width_(stack_.layer(stack_.size() - 1).output_size()), decoder_(shape.classes, width_, parse_target(shape.stack.target)) {
    check_pool(shape.pool);
    if (shape.vocab < 1 || shape.classes < 2) fail("classifier: vocab ", shape.vocab, ", classes ", shape.classes);
    front_ = make_classifier_front(shape.front, shape.vocab, shape.stack.input, projection_config(shape), shape.stack.seed);
    weights_ = Tensor<float>({shape.classes, width_}), bias_ = Tensor<float>({shape.classes});
    seeded_fill(weights_, shape.stack.seed, streams::kClassifierOutput, 1.0 / std::sqrt(static_cast<double>(width_)));
    grads_ = {Tensor<float>(weights_.shape), Tensor<float>(bias_.shape)};
    if (shape.pool == "attention") query_ = Tensor<float>({width_}), dquery_ = Tensor<float>({width_});
    tapes_ = stack_.make_tapes();
    stack_.prepare_training();
}

std::vector<nn::Param> SequenceClassifier::params() {
    std::vector<nn::Param> all = front_->params();
    for (size_t l = 0; l < stack_.size(); l++)
        for (auto &p : stack_.layer(l).params()) all.push_back({"layer_" + std::to_string(l) + "/" + p.name, p.value, p.grad});
    if (!query_.data.empty()) all.push_back({"pool/query", &query_, &dquery_});
    all.push_back({"output/weights", &weights_, &grads_.dweights});
    all.push_back({"output/bias", &bias_, &grads_.dbias});
    return all;
}

int64_t SequenceClassifier::parameter_count() {
    int64_t n = 0;
    for (const nn::Param &p : params()) n += static_cast<int64_t>(p.value->size());
    return n;
}

const Tensor<float> &SequenceClassifier::pooled(const nn::ClassifyBatch &batch, bool tape) {
    const int64_t B = static_cast<int64_t>(batch.lengths.size());
    const Tensor<float> &x = front_->forward(batch);
    if (has_lengths_) nn::set_stack_lengths(stack_, std::vector<int32_t>(batch.lengths.begin(), batch.lengths.end()));
    std::vector<nn::State> states = stack_.initial_state(B);
    h_ = &stack_.forward(x, states, tape ? &tapes_ : nullptr);
    if (!query_.data.empty()) {
        attention_ = attention_pool(*h_, batch.lengths, query_);
        return attention_.pooled;
    }
    pooled_ = pool_steps(*h_, batch.lengths, shape_.pool);
    return pooled_.pooled;
}

void SequenceClassifier::zero_grads() {
    stack_.zero_grads();
    front_->zero_grads();
    for (Tensor<float> *g : {&grads_.dweights, &grads_.dbias, &dquery_}) std::fill(g->data.begin(), g->data.end(), 0.0f);
}

void SequenceClassifier::backward_from_pooled(const nn::ClassifyBatch &batch) {
    // The output layer's gradients are of the sum: scale to the mean, then spread dpooled over the pooled steps.
    const float inv_b = 1.0f / static_cast<float>(batch.lengths.size());
    for (Tensor<float> *g : {&grads_.dweights, &grads_.dbias})
        for (float &v : g->data) v *= inv_b;
    const Tensor<float> dh = query_.data.empty()
                                 ? pool_steps_backward(pooled_, dpooled_, batch.lengths, shape_.pool, batch.T, inv_b)
                                 : attention_pool_backward(*h_, batch.lengths, query_, attention_, dpooled_, inv_b, dquery_);
    stack_.backward(tapes_, dh, nullptr, &dx_, nullptr);
    front_->backward(batch, dx_);
}

double SequenceClassifier::loss(const nn::ClassifyBatch &batch, bool train) {
    const int64_t B = static_cast<int64_t>(batch.lengths.size());
    if (train) zero_grads();
    const Tensor<float> &p = pooled(batch, train);
    dpooled_ = Tensor<float>(p.shape);
    const double sum = decoder_.loss(p, batch.labels, weights_, bias_, train ? &dpooled_ : nullptr, train ? &grads_ : nullptr);
    if (train) backward_from_pooled(batch);
    return sum / static_cast<double>(B);
}

std::vector<double> SequenceClassifier::logits_of_pooled(const Tensor<float> &p) const {
    const int64_t B = p.dim(0), C = shape_.classes;
    std::vector<double> z(static_cast<size_t>(B * C));
    for (int64_t b = 0; b < B; b++)
        for (int64_t c = 0; c < C; c++) {
            double v = bias_(c);
            for (int64_t h = 0; h < width_; h++) v += static_cast<double>(weights_(c, h)) * p(b, h);
            z[b * C + c] = v;
        }
    return z;
}

std::vector<double> SequenceClassifier::logits(const nn::ClassifyBatch &batch) { return logits_of_pooled(pooled(batch, false)); }

double SequenceClassifier::distillation_loss(const nn::ClassifyBatch &batch, const std::vector<double> &teacher,
                                             const Distillation &d) {
    const int64_t B = static_cast<int64_t>(batch.lengths.size()), C = shape_.classes;
    zero_grads();
    const Tensor<float> &p = pooled(batch, true);
    std::vector<double> dz;
    const double sum = lm::distillation_loss(logits_of_pooled(p), teacher, batch.labels, C, d, &dz);
    dpooled_ = Tensor<float>(p.shape);
    for (int64_t b = 0; b < B; b++)
        for (int64_t c = 0; c < C; c++) {
            const double g = dz[b * C + c];
            grads_.dbias(c) += static_cast<float>(g);
            for (int64_t h = 0; h < width_; h++) {
                grads_.dweights(c, h) += static_cast<float>(g * p(b, h));
                dpooled_(b, h) += static_cast<float>(g * weights_(c, h));
            }
        }
    backward_from_pooled(batch);
    return sum / static_cast<double>(B);
}

std::vector<int32_t> most_likely(const std::vector<double> &z, int64_t C) {
    std::vector<int32_t> out(z.size() / static_cast<size_t>(C));
    for (size_t b = 0; b < out.size(); b++) out[b] = static_cast<int32_t>(std::max_element(&z[b * C], &z[b * C] + C) - &z[b * C]);
    return out;
}

std::vector<int32_t> SequenceClassifier::predict(const nn::ClassifyBatch &batch) { return most_likely(logits(batch), shape_.classes); }

std::vector<Int8LayerParams> SequenceClassifier::int8_layers() const {
    std::vector<Int8LayerParams> out;
    for (const Int8LayerParams *q : stack_.int8_layers()) out.push_back(*q);
    return out;
}

void SequenceClassifier::set_int8_layers(std::vector<Int8LayerParams> layers) {
    if (layers.size() != stack_.size())
        fail("int8 parameters of ", layers.size(), " layers for a stack of ", stack_.size());
    for (size_t l = 0; l < layers.size(); l++) stack_.layer(l).set_quantized(std::move(layers[l]));
}

}  // namespace qrnn::lm
