// What the trainer (lm/trainer.h) trains: any model with parameters, a recurrent state carried from batch to
// batch, and a loss over a batch of token targets with its gradient. The language model (lm/language_model.h)
// is one; other models (e.g. an encoder-decoder on synthetic tasks) plug into the same loop and checkpoints.
#pragma once
#include <cstdint>
#include <vector>

#include "lm/corpus.h"
#include "nn/layer.h"

namespace qrnn::lm {

struct StepResult {
    double loss = 0;        // summed over the batch's targets (natural log)
    int64_t targets = 0;
    double rnn_ms = 0;      // recurrent part, forward + backward (embedding and dropouts included)
    double softmax_ms = 0;  // output layer and loss, forward + backward
};

class TrainableModel {
public:
    virtual ~TrainableModel() = default;
    virtual std::vector<nn::Param> params() = 0;  // every trainable parameter with its gradient, stable order
    void zero_grads();
    virtual void set_stochastic(bool on) = 0;     // dropout and zoneout masks on (training) or off
    // Carried state back to zeros for `batch` streams; `time` is the absolute step that indexes the masks.
    virtual void reset_state(int64_t batch, int64_t time) = 0;
    virtual std::vector<nn::State> &carried_state() = 0;  // saved in checkpoints as it is
    // Forward over the batch, advancing the carried state; with `train` also the backward (truncated at the
    // batch start), accumulating every parameter's gradient.
    virtual StepResult step(const Batch &batch, bool train) = 0;
};

}  // namespace qrnn::lm
