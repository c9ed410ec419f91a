// The QRNN layer as a trainable nn::Layer: forward (with a tape) and backward through the compiled training
// pipelines of its schedule (runtime/compiled_training.h). Registered as the layer factory of model "qrnn".
// State: "history" [max(k-1,1)][B][n] and "c" [B][m]. Params: "weights" [G][k][n][m], "bias" [G][m].
#pragma once
#include "nn/layer.h"
#include "runtime/compiled_training.h"

namespace qrnn::nn {

class QrnnLayer : public Layer {
public:
    // Layer `index` of the stack cfg describes, parameters initialised as init_params(cfg) does.
    QrnnLayer(const ModelConfig &cfg, int64_t index, const Knobs &knobs = {}, const TrainingLayerOptions &options = {});
    std::string kind() const override { return "qrnn"; }
    int64_t input_size() const override { return n_; }
    int64_t output_size() const override { return cfg_.hidden; }
    State initial_state(int64_t batch) const override;
    void set_stochastic(bool on) override { cfg_.training = on; }
    std::unique_ptr<Tape> make_tape() const override;
    void forward(const Tensor<float> &x, State &state, Tensor<float> &y, Tape *tape) override;
    void backward(const Tape &tape, const Tensor<float> &dy, const State *d_final, Tensor<float> *dx,
                  State *d_initial) override;
    // The encoder-decoder's decoder layers (built with TrainingLayerOptions): the forward adds batch_bias
    // [G][B][m] to the gate pre-activations; the backward adds dgates [G][T][B][m] to the gradient of the
    // activated gates and writes the gradient of batch_bias. forward/backward are these with none of them.
    void forward_with(const Tensor<float> &x, const Tensor<float> *batch_bias, State &state, Tensor<float> &y, Tape *tape);
    void backward_with(const Tape &tape, const Tensor<float> &dy, const Tensor<float> *dgates, const State *d_final,
                       Tensor<float> *dx, State *d_initial, Tensor<float> *dbatch_bias);
    // What a tape of this layer recorded: the cell states c [T][B][m]; activated gate `letter` [T][B][m].
    static const Tensor<float> &tape_cell(const Tape &tape);
    Tensor<float> tape_gate(const Tape &tape, char letter) const;
    std::vector<Param> params() override;
    double forward_flops(int64_t T, int64_t B) const override;
    double backward_flops(int64_t T, int64_t B) const override;

private:
    ModelConfig cfg_;
    int64_t index_, n_;
    LayerParams<float> params_, grads_;
    std::shared_ptr<CompiledTrainingLayer> training_;
    std::shared_ptr<CompiledLayer> inference_;
    LayerGradsF scratch_;
    std::unique_ptr<Tape> scratch_tape_;  // forward without a tape of a layer that has no inference pipeline
};

// State <-> the runtime's LayerState (copies).
LayerState<float> layer_state(const State &s);
State make_state(LayerState<float> s, int64_t time);

}  // namespace qrnn::nn
