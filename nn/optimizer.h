// Optimizers for trainable parameters (nn::Param), with PyTorch's conventions (docs/training.md, "One optimizer
// step"): SGD as torch.optim.SGD with weight_decay after torch.nn.utils.clip_grad_norm_ (the language model of
// `qrnn train`, with a learning rate that decays when the validation loss stops improving), and AdamW as
// torch.optim.AdamW after the same clipping (the synthetic sequence tasks, tasks/seq_trainer.h).
//
// Every step takes a grad_scale: the gradient the optimizer uses is grad_scale * Param::grad. The language
// model accumulates the gradient of its summed loss and passes 1 / (target tokens): the gradient of the mean.
#pragma once
#include <cstdint>
#include <vector>

#include "nn/layer.h"

namespace qrnn::nn {

// The global L2 norm of grad_scale * every gradient; throws qrnn::Error when it is not finite (training diverged).
double gradient_norm(const std::vector<Param> &params, double grad_scale = 1.0);
// clip_grad_norm_'s factor: min(1, clip_norm / (norm + 1e-6)); 1 when clip_norm is 0 (off).
double clip_scale(double norm, double clip_norm);

struct SgdOptions {
    double lr = 1.0;
    double clip_norm = 0.25;    // rescale the gradient when its global L2 norm exceeds this; 0 turns it off
    double weight_decay = 0.0;  // L2 as torch.optim.SGD: weight_decay * value added to the clipped gradient
    void validate() const;      // throws qrnn::Error naming the bad option and value
};

struct SgdStepStats {
    double grad_norm = 0;  // global L2 norm of the scaled gradient, before clipping (clip_grad_norm_'s result)
    bool clipped = false;
};

class Sgd {
public:
    explicit Sgd(SgdOptions opts);
    // g = grad_scale * grad; value -= lr * (clip_scale(|g|, clip) * g + weight_decay * value), in float, parameter
    // by parameter (deterministic).
    SgdStepStats step(const std::vector<Param> &params, double grad_scale = 1.0);
    double lr() const { return opts_.lr; }
    void set_lr(double lr) { opts_.lr = lr; }
    const SgdOptions &options() const { return opts_; }

private:
    SgdOptions opts_;
};

struct AdamOptions {
    double lr = 3e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
    double clip_norm = 5.0;     // 0: off
    double weight_decay = 0.0;  // decoupled, as torch.optim.AdamW: value *= 1 - lr * weight_decay before the update
    void validate() const;      // throws qrnn::Error naming the bad option and value
};

// Adam's whole state: the step count and the two moments of every parameter (checkpointed: tasks/seq_checkpoint.h).
struct AdamState {
    int64_t t = 0;
    std::vector<std::vector<float>> m, v;  // one per parameter, in the order given to step(); empty before it
};

// AdamW (Loshchilov & Hutter 2019), exactly torch.optim.AdamW: with g the clipped, scaled gradient and t the step,
// value *= 1 - lr*wd; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
// value -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps).
// Its state (moments, step) holds one slot per parameter in the order given.
class Adam {
public:
    explicit Adam(AdamOptions opts);
    // Returns the global norm of the scaled gradient, before clipping.
    double step(const std::vector<Param> &params, double grad_scale = 1.0);
    void set_lr(double lr) { opts_.lr = lr; }
    double lr() const { return opts_.lr; }
    const AdamState &state() const { return state_; }
    void set_state(AdamState state) { state_ = std::move(state); }

private:
    AdamOptions opts_;
    AdamState state_;
};

// Divides the learning rate by `factor` when a validation loss fails to improve on the best by more than
// `min_delta` (relative), `patience` times in a row. Its whole state is the three fields below (checkpointed).
struct PlateauDecay {
    double factor = 4.0;
    int64_t patience = 0;
    double min_delta = 0.0;
    double best = 0;      // best validation loss so far (0 before the first observation)
    int64_t bad = 0;      // observations since the last improvement
    bool started = false;
    void validate() const;
    // Returns true when it decays sgd's learning rate.
    bool observe(double val_loss, Sgd &sgd);
};

}  // namespace qrnn::nn
