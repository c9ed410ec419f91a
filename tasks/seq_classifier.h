// A sequence classifier for `qrnn train --task classify` (tasks/seq_trainer.h): embedding -> a stack of any
// trainable model (nn::LayerStack: qrnn, qrnn-dense, qrnn-bidir, qrnn-bidir-sum, qrnn-varlen, lstm-*, cnn)
// -> pooling over each sequence's real steps (mean, or the output at its last step) -> linear -> softmax
// cross-entropy (lm::SoftmaxDecoder), mean over the batch.
// Variable lengths: the embedded input is zero past each length; the bidirectional / variable-length layers
// get the lengths (nn::set_stack_lengths: the reverse scan starts at each sequence's end); the other models
// are causal, so their outputs before a sequence's end do not see its padding. Pooling reads only real steps,
// so gradients ignore the padding.
#pragma once
#include "lm/softmax_decoder.h"
#include "nn/seq_tasks.h"
#include "nn/stack.h"

namespace qrnn::lm {

struct ClassifierShape {
    ModelSpec stack;            // model, pooling, window, input (= embedding size), hidden, layers, rates, seed, target
    int64_t vocab = 0, classes = 2;
    std::string pool = "mean";  // mean | last
};

class SequenceClassifier {
public:
    // run: the batch and longest sequence its layers are built for. Throws qrnn::Error on a bad shape or pool.
    SequenceClassifier(const ClassifierShape &shape, const RunSettings &run);
    std::vector<nn::Param> params();  // "embedding", "layer_<l>/<name>", "output/weights" [C][m], "output/bias" [C]
    void set_stochastic(bool on) { stack_.set_stochastic(on); }
    void set_mask_draw(uint64_t draw) { stack_.set_mask_draw(draw); }  // nn::Layer::set_mask_draw
    // Mean cross-entropy of the batch; with `train`, every gradient of it (gradients zeroed first).
    double loss(const nn::ClassifyBatch &batch, bool train);
    std::vector<int32_t> predict(const nn::ClassifyBatch &batch);  // the most likely class of each sequence

private:
    const Tensor<float> &pooled(const nn::ClassifyBatch &batch, bool tape);  // [B][m_out]
    ClassifierShape shape_;
    nn::LayerStack stack_;
    bool has_lengths_;  // the stack's layers take per-sequence lengths
    int64_t width_;     // the stack's output width
    SoftmaxDecoder decoder_;
    Tensor<float> embedding_, d_embedding_, weights_, bias_;
    DecoderGrads grads_;
    nn::Tapes tapes_;
    Tensor<float> x_, pooled_, dpooled_, dh_, dx_;
};

}  // namespace qrnn::lm
