// `qrnn run --pass training` for any model with trainable layers (nn/layer.h factories): the timed step is
// a forward that records tapes plus the backward of loss = sum(dh * h) with a seeded dh (gradients of every
// parameter, of the input and of the initial state). --verify compares every gradient with the model's
// double reference (the verifier of its ModelPlugin record); --dump writes them too.
#pragma once
#include "nn/stack.h"
#include "plugins/model.h"
#include "reference/qrnn_backward.h"
#include "runtime/compiled_training.h"

namespace qrnn {

// One recorded training step, for a verifier.
struct TrainingStep {
    const ModelConfig &cfg;
    nn::LayerStack &stack;               // parameters and their gradients
    const Tensor<float> &x, &dy, &y, &dx;  // input, output gradient, output, input gradient
    const std::vector<nn::State> &initial, &d_initial;
};
// For a model registered without one (ModelPlugin::verifier is the usual way).
void register_training_verifier(const std::string &model, TrainingVerifier verifier);

// A verifier's comparison for QRNN-shaped layers: the output against the reference forward's ref_y, dx and
// every layer's dweights, dbias, dc0, dhistory (grads[l], as the model holds them) against the reference
// backward's; each tensor relative to its own scale, the worst reported.
Comparison compare_training(const TrainingStep &s, const Tensor<double> &ref_y, const ref::StackGrads &ref,
                            const std::vector<LayerGradsF> &grads);
// grads[l] of a stack of QRNN-shaped layers (params "weights", "bias"; state "history", "c").
std::vector<LayerGradsF> stack_layer_grads(const TrainingStep &s);

// Throws qrnn::Error "model 'X' has no backward pass (--pass training runs: ...)" unless model_trains.
std::unique_ptr<Model> build_training_model(const ModelConfig &cfg, const RunOptions &opts);

}  // namespace qrnn
