// The densely connected QRNN stack (the paper's IMDb model) as one trainable nn::Layer: layer l's input is the
// channel concatenation of the stack input and the outputs of layers 0..l-1, [T][B][n + l*m]; dropout (layer
// l >= 1, train mode) on that whole input; the block's output is the last layer's h [T][B][m].
//
// Nothing is concatenated: the block keeps one buffer [T][B][n + (L-1)*m] (in the tape when training) whose
// first n channels hold the input (copied in once; an embedding lookup could write there directly) and
// where layer l writes its h into channels [n + l*m, n + (l+1)*m). Layer l's pipeline reads the prefix
// [0, n + l*m) of that buffer in place (a strided Halide view, runtime/compiled_layer.h LayerCall::x_view),
// through the plain QRNN layer's pipelines and schedules. Backward: one gradient buffer of the same layout;
// layer l's output gradient is its slice (read in place, LayerCall::dh_view), its input gradient is added to
// the prefix it read (the last layer's, which reads the whole buffer, is the buffer), so dX reaches every piece.
//
// Use: model "qrnn-dense" (`qrnn run --model qrnn-dense [--pass training]`), or nn::LayerStack(cfg) with
// cfg.model = "qrnn-dense" (its stack factory gives this one block), or DenseQrnn(cfg) directly.
// State: "history_<l>" [max(k-1,1)][B][n + l*m] and "c_<l>" [B][m] per layer. Params: "layer_<l>/weights"
// [G][k][n + l*m][m] and "layer_<l>/bias" [G][m]. Precision (cfg.precision): f32 or bf16, every layer's GEMM
// operands as the plain layer's (docs/precision.md); the buffer, the scans and the gradients stay f32. Reference:
// reference/dense.h.
#pragma once
#include "core/precision.h"
#include "nn/layer.h"
#include "runtime/compiled_training.h"

namespace qrnn::nn {

class DenseQrnn : public Layer {
public:
    explicit DenseQrnn(const ModelConfig &cfg);
    std::string kind() const override { return "qrnn-dense"; }
    int64_t input_size() const override { return cfg_.input; }
    int64_t output_size() const override { return cfg_.hidden; }
    State initial_state(int64_t batch) const override;
    void set_stochastic(bool on) override { cfg_.stochastic = on; }
    void set_mask_draw(uint64_t draw) override { cfg_.mask_draw = draw; }
    void set_knobs(const Knobs &knobs) override { knobs_ = knobs; }
    void prepare_training() override { training(); }
    std::unique_ptr<Tape> make_tape() const override;
    void forward(const Tensor<float> &x, State &state, Tensor<float> &y, Tape *tape) override;
    void backward(const Tape &tape, const Tensor<float> &dy, const State *d_final, Tensor<float> *dx,
                  State *d_initial) override;
    std::vector<Param> params() override;
    double forward_flops(int64_t T, int64_t B) const override;
    double backward_flops(int64_t T, int64_t B) const override;

    int64_t layers() const { return cfg_.layers; }
    LayerParams<float> &layer_params(int64_t l) { return params_.at(l); }
    // The state of layer l (history, c) as the plain layer's, and back.
    static LayerState<float> layer_state(const State &s, int64_t l);
    static void set_layer_state(State &s, int64_t l, LayerState<float> v);

private:
    int64_t width(int64_t l) const { return cfg_.input + l * cfg_.hidden; }  // layer l's input
    CompiledTrainingLayer &training();  // compiled on first use
    ModelConfig cfg_;
    Halide::Target target_;  // cfg_.target, resolved
    Precision precision_;    // of every layer's GEMM operands (f32 or bf16), forward and backward
    Knobs knobs_;
    std::vector<LayerParams<float>> params_, grads_;
    std::shared_ptr<CompiledTrainingLayer> training_;
    std::vector<std::shared_ptr<CompiledLayer>> inference_;
    Tensor<float> buffer_, d_buffer_, c_scratch_;  // scratch: the untaped forward's, the backward's
    // Per layer, so no buffer changes shape from layer to layer (a reshaped scratch is reallocated and
    // zeroed on every step: page faults and memset were ~8% of a B=32 T=128 training step).
    std::vector<LayerGradsF> scratch_;
};

}  // namespace qrnn::nn
