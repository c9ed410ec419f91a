// Adam (Kingma & Ba 2015) for trainable parameters (nn::Param), with clipping of the global gradient norm
// first, as nn::Sgd does. Used by the sequence-to-sequence trainer (nn/seq2seq.h); its state (moments, step)
// lives here, one slot per parameter in the order given.
#pragma once
#include "nn/layer.h"

namespace qrnn::nn {

struct AdamOptions {
    double lr = 3e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
    double clip_norm = 5.0;  // 0: off
    void validate() const;   // throws qrnn::Error naming the bad option and value
};

class Adam {
public:
    explicit Adam(AdamOptions opts);
    // Returns the global gradient norm before clipping; throws when it is not finite (diverged).
    double step(const std::vector<Param> &params);
    void set_lr(double lr) { opts_.lr = lr; }
    double lr() const { return opts_.lr; }

private:
    AdamOptions opts_;
    std::vector<std::vector<float>> m_, v_;
    int64_t t_ = 0;
};

}  // namespace qrnn::nn
