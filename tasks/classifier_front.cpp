#include "tasks/classifier_front.h"

#include <algorithm>

#include "core/error.h"
#include "core/streams.h"
#include "lm/softmax_decoder.h"
#include "nn/bottleneck.h"
#include "runtime/seeded_fill.h"

namespace qrnn::lm {
namespace {

// The bottleneck's weights draw from the embedding's stream: a projection classifier has no embedding table, so
// the stream keeps one use per model (core/streams.h: 0x43000).
constexpr uint32_t kBottleneckStream = streams::kClassifierEmbedding;

int64_t batch_size(const nn::ClassifyBatch &batch) { return static_cast<int64_t>(batch.lengths.size()); }

class EmbeddingFront : public ClassifierFront {
public:
    EmbeddingFront(int64_t vocab, int64_t n, uint32_t seed) : table_({vocab, n}), d_table_({vocab, n}) {
        seeded_fill(table_, seed, streams::kClassifierEmbedding, 0.1);
    }
    std::vector<nn::Param> params() override { return {{"embedding", &table_, &d_table_}}; }
    void zero_grads() override { std::fill(d_table_.data.begin(), d_table_.data.end(), 0.0f); }
    const Tensor<float> &forward(const nn::ClassifyBatch &batch) override {
        const int64_t T = batch.T, B = batch_size(batch), n = table_.dim(1);
        x_ = Tensor<float>({T, B, n});
        embedding_forward(table_, batch.tokens, x_);
        for (int64_t b = 0; b < B; b++)
            for (int64_t t = batch.lengths[b]; t < T; t++) std::fill_n(&x_(t, b, 0), n, 0.0f);
        return x_;
    }
    void backward(const nn::ClassifyBatch &batch, const Tensor<float> &dx) override {
        embedding_backward(batch.tokens, dx, d_table_);
    }

private:
    Tensor<float> table_, d_table_, x_;
};

class ProjectionFront : public ClassifierFront {
public:
    ProjectionFront(const nn::ProjectionConfig &projection, int64_t n, uint32_t seed)
        : projection_(projection), bottleneck_(projection.features, n, seed, kBottleneckStream) {}
    std::vector<nn::Param> params() override { return bottleneck_.params(); }
    void zero_grads() override { bottleneck_.zero_grads(); }
    const Tensor<float> &forward(const nn::ClassifyBatch &batch) override {
        project(batch);
        bottleneck_.forward(features_, batch.lengths, x_);
        return x_;
    }
    void backward(const nn::ClassifyBatch &batch, const Tensor<float> &dx) override {
        bottleneck_.backward(features_, batch.lengths, x_, dx);
    }

private:
    // features_ [T][B][N]: each real step's token text projected, zero past each length.
    void project(const nn::ClassifyBatch &batch) {
        const int64_t B = batch_size(batch);
        const bool has_words = !batch.words.empty();
        if (has_words && batch.words.size() != batch.tokens.size())
            fail("projection: the batch has ", batch.words.size(), " words for ", batch.tokens.size(), " tokens ([T][B])");
        nn::project_steps(projection_, batch.T, batch.lengths, [&](int64_t t, int64_t b) {
            const size_t at = static_cast<size_t>(t * B + b);
            return has_words ? batch.words[at] : std::to_string(batch.tokens[at]);
        }, features_);
    }
    nn::ProjectionConfig projection_;
    nn::Bottleneck bottleneck_;
    Tensor<float> features_, x_;
};

}  // namespace

const std::vector<std::string> &classifier_fronts() {
    static const std::vector<std::string> fronts{"embedding", "projection"};
    return fronts;
}

std::unique_ptr<ClassifierFront> make_classifier_front(const std::string &front, int64_t vocab, int64_t n,
                                                       const nn::ProjectionConfig &projection, uint32_t seed) {
    if (front == "embedding") return std::make_unique<EmbeddingFront>(vocab, n, seed);
    if (front == "projection") {
        nn::validate_projection_config(projection);
        return std::make_unique<ProjectionFront>(projection, n, seed);
    }
    fail("front must be embedding or projection (got '", front, "')");
}

}  // namespace qrnn::lm
