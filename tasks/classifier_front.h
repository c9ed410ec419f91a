// The sequence classifier's front end (tasks/seq_classifier.h): a batch's tokens -> the stack's input
// x [T][B][n], zero past each sequence's length.
//   "embedding": a trainable table [vocab][n] looked up by token id (param "embedding").
//   "projection": pQRNN's (Kaliamoorthi et al.): no table; each token's text (ClassifyBatch::words when the batch
//                 has them, else the decimal string of its id) -> N ternary features (nn/projection.h, no
//                 parameters) -> the dense ReLU bottleneck N -> n (nn/bottleneck.h; params "bottleneck/weights",
//                 "bottleneck/bias"). Its parameters do not grow with the vocabulary.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "nn/layer.h"
#include "nn/projection.h"
#include "nn/seq_tasks.h"

namespace qrnn::lm {

class ClassifierFront {
public:
    virtual ~ClassifierFront() = default;
    virtual std::vector<nn::Param> params() = 0;
    virtual void zero_grads() = 0;
    // x [T][B][n] of the batch (valid until the next forward).
    virtual const Tensor<float> &forward(const nn::ClassifyBatch &batch) = 0;
    // Accumulates the parameters' gradients from dx [T][B][n] of the last forward, which was of `batch`.
    virtual void backward(const nn::ClassifyBatch &batch, const Tensor<float> &dx) = 0;
};

// The fronts: embedding, projection.
const std::vector<std::string> &classifier_fronts();

// front: "embedding" (vocab ids) or "projection" (projection.features, projection.seed); n: the stack's input;
// seed: the initialisation's. Throws qrnn::Error naming a bad front or size.
std::unique_ptr<ClassifierFront> make_classifier_front(const std::string &front, int64_t vocab, int64_t n,
                                                       const nn::ProjectionConfig &projection, uint32_t seed);

}  // namespace qrnn::lm
