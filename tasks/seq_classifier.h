// A sequence classifier for `qrnn train --task classify` (tasks/seq_trainer.h): a front end (an embedding, or
// pQRNN's projection + dense ReLU bottleneck: tasks/classifier_front.h) -> a stack of any trainable model
// (nn::LayerStack: qrnn, qrnn-dense, qrnn-bidir, qrnn-bidir-sum, qrnn-varlen, lstm-*, cnn) -> pooling over each
// sequence's real steps (mean, the output at its last step, or max: tasks/sequence_pooling.h; or attention with a
// learned query: tasks/attention_pooling.h) -> linear ->
// softmax cross-entropy (lm::SoftmaxDecoder), mean over the batch. With front "projection" and a bidirectional
// QRNN stack this is pQRNN (Kaliamoorthi et al. 2020) with mean, max or attention pooling.
// Variable lengths: the front's output is zero past each length; the bidirectional / variable-length layers
// get the lengths (nn::set_stack_lengths: the reverse scan starts at each sequence's end); the other models
// are causal, so their outputs before a sequence's end do not see its padding. Pooling reads only real steps,
// so gradients ignore the padding.
#pragma once
#include <memory>

#include "lm/softmax_decoder.h"
#include "nn/seq_tasks.h"
#include "nn/stack.h"
#include "tasks/attention_pooling.h"
#include "tasks/classifier_front.h"
#include "tasks/distillation.h"
#include "tasks/sequence_pooling.h"

namespace qrnn::lm {

struct ClassifierShape {
    ModelSpec stack;            // model, pooling, window, input (= the front's output width), hidden, layers, rates, seed, target
    int64_t vocab = 0, classes = 2;
    std::string pool = "mean";  // mean | last | max | attention
    std::string front = "embedding";  // embedding (a [vocab][input] table) | projection (pQRNN's; no table)
    int64_t projection_features = 512;  // projection: N ternary features per token (nn/projection.h)
    uint64_t projection_seed = 0;       // projection: the hash seed
};

// Each row's most likely class (the first of equals) of logits [rows][classes].
std::vector<int32_t> most_likely(const std::vector<double> &logits, int64_t classes);

class SequenceClassifier {
public:
    // run: the batch and longest sequence its layers are built for. Throws qrnn::Error on a bad shape, pool or front.
    SequenceClassifier(const ClassifierShape &shape, const RunSettings &run);
    // The front's ("embedding", or "bottleneck/weights" and "bottleneck/bias"), "layer_<l>/<name>",
    // "pool/query" [m] (pool attention only; zero at first: mean pooling), "output/weights" [C][m], "output/bias" [C].
    std::vector<nn::Param> params();
    int64_t parameter_count();  // the sum of params()' sizes
    void set_stochastic(bool on) { stack_.set_stochastic(on); }
    void set_mask_draw(uint64_t draw) { stack_.set_mask_draw(draw); }  // nn::Layer::set_mask_draw
    // An int8 stack's calibration (docs/int8.md): between on and off, predictions run in f32 and record ranges.
    void set_int8_calibration(bool on) { stack_.set_int8_calibration(on); }
    // The int8 layers' parameters (after a calibration), in stack order; and setting them instead (a checkpoint's).
    std::vector<Int8LayerParams> int8_layers() const;
    void set_int8_layers(std::vector<Int8LayerParams> layers);
    // Mean cross-entropy of the batch; with `train`, every gradient of it (gradients zeroed first).
    double loss(const nn::ClassifyBatch &batch, bool train);
    // Knowledge distillation's loss (tasks/distillation.h), mean over the batch, and every gradient of it; teacher:
    // the teacher's logits [B][classes].
    double distillation_loss(const nn::ClassifyBatch &batch, const std::vector<double> &teacher, const Distillation &d);
    std::vector<double> logits(const nn::ClassifyBatch &batch);    // [B][classes], in double
    std::vector<int32_t> predict(const nn::ClassifyBatch &batch);  // the most likely class of each sequence

private:
    const Tensor<float> &pooled(const nn::ClassifyBatch &batch, bool tape);  // [B][m_out]
    std::vector<double> logits_of_pooled(const Tensor<float> &pooled) const;
    void zero_grads();
    void backward_from_pooled(const nn::ClassifyBatch &batch);  // from dpooled_ and the output layer's summed grads_
    ClassifierShape shape_;
    nn::LayerStack stack_;
    bool has_lengths_;  // the stack's layers take per-sequence lengths
    int64_t width_;     // the stack's output width
    SoftmaxDecoder decoder_;
    std::unique_ptr<ClassifierFront> front_;
    Tensor<float> weights_, bias_;
    DecoderGrads grads_;
    nn::Tapes tapes_;
    PooledSteps pooled_;
    Tensor<float> query_, dquery_;  // pool attention: [m]; empty otherwise
    AttentionPooled attention_;
    const Tensor<float> *h_ = nullptr;  // the stack's output of the last forward
    Tensor<float> dpooled_, dx_;
};

}  // namespace qrnn::lm
