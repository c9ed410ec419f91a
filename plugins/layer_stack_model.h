// The one inference adapter of layer-stack models: `qrnn run` (pass inference) of any model whose record gives a
// layer or stack factory times nn::LayerStack::forward without tapes, from a copy of the initial states, over a
// seeded input (or the one of --load, with the parameters and initial states: QRNN-shaped stacks,
// plugins/stack_dump.h); --verify hands what that forward saw and produced to the model's InferenceVerifier.
#pragma once
#include "nn/stack.h"
#include "plugins/model.h"

namespace qrnn {

class LayerStackModel : public Model {
public:
    LayerStackModel(const ModelConfig &cfg, const RunOptions &opts, InferenceVerifier verifier);
    void forward() override;
    Comparison verify() override;
    double flops() const override { return stack_.forward_flops(cfg_.seq, cfg_.batch); }
    void dump(const std::string &path) override;

private:
    ModelConfig cfg_;
    nn::LayerStack stack_;
    Tensor<float> x_;
    std::vector<nn::State> initial_, final_;
    const Tensor<float> *y_ = nullptr;  // the last forward's output (owned by the stack)
    InferenceVerifier verifier_;
};

}  // namespace qrnn
