// Optimizers for trainable parameters (nn::Param): plain SGD (L2 weight decay, clipping of the global gradient
// norm, a learning rate that decays when the validation loss stops improving; the language model of `qrnn
// train`) and Adam (the same decay and clipping; the synthetic sequence tasks, lm/seq_trainer.h).
#pragma once
#include <cstdint>
#include <vector>

#include "nn/layer.h"

namespace qrnn::nn {

// Adds weight_decay * value to every gradient (when weight_decay != 0), then returns the global L2 norm of the
// gradients; throws qrnn::Error when it is not finite (training diverged).
double decay_and_norm(const std::vector<Param> &params, double weight_decay);
// The factor that brings a gradient of global norm `norm` down to clip_norm (1: not exceeded, or clip_norm 0).
double clip_scale(double norm, double clip_norm);

struct SgdOptions {
    double lr = 1.0;
    double clip_norm = 0.25;    // rescale the gradient when its global L2 norm exceeds this; 0 turns it off
    double weight_decay = 0.0;  // L2: adds weight_decay * value to each gradient before clipping
    void validate() const;      // throws qrnn::Error naming the bad option and value
};

struct SgdStepStats {
    double grad_norm = 0;  // global L2 norm after weight decay, before clipping
    bool clipped = false;
};

class Sgd {
public:
    explicit Sgd(SgdOptions opts);
    // value -= lr * clip(grad + weight_decay * value), in float, parameter by parameter (deterministic).
    SgdStepStats step(const std::vector<Param> &params);
    double lr() const { return opts_.lr; }
    void set_lr(double lr) { opts_.lr = lr; }
    const SgdOptions &options() const { return opts_; }

private:
    SgdOptions opts_;
};

struct AdamOptions {
    double lr = 3e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
    double clip_norm = 5.0;     // 0: off
    double weight_decay = 0.0;  // L2, as SgdOptions
    void validate() const;      // throws qrnn::Error naming the bad option and value
};

// Adam's whole state: the step count and the two moments of every parameter (checkpointed: lm/seq_checkpoint.h).
struct AdamState {
    int64_t t = 0;
    std::vector<std::vector<float>> m, v;  // one per parameter, in the order given to step(); empty before it
};

// Adam (Kingma & Ba 2015): its state (moments, step) holds one slot per parameter in the order given.
class Adam {
public:
    explicit Adam(AdamOptions opts);
    // Returns the global gradient norm (after weight decay, before clipping).
    double step(const std::vector<Param> &params);
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
