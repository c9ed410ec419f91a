// The QRNN layer as a trainable nn::Layer: forward (with a tape) and backward through the compiled training
// pipelines of its schedule (runtime/compiled_training.h). Registered as the layer factory of model "qrnn".
// State: "history" [max(k-1,1)][B][n] and "c" [B][m]. Params: "weights" [G][k][n][m], "bias" [G][m].
#pragma once
#include "nn/layer.h"
#include "runtime/compiled_training.h"

namespace qrnn::nn {

class QrnnLayer : public Layer {
public:
    // Layer `index` of the stack the options describe, parameters initialised as init_params(cfg) does.
    QrnnLayer(const QrnnOptions &opt, int64_t index, const Knobs &knobs = {});
    QrnnLayer(const ModelConfig &cfg, int64_t index, const Knobs &knobs = {})
        : QrnnLayer(qrnn_options(cfg), index, knobs) {}
    std::string kind() const override { return "qrnn"; }
    int64_t input_size() const override { return n_; }
    int64_t output_size() const override { return opt_.hidden; }
    State initial_state(int64_t batch) const override;
    void set_stochastic(bool on) override { opt_.stochastic = on; }
    std::unique_ptr<Tape> make_tape() const override;
    void forward(const Tensor<float> &x, State &state, Tensor<float> &y, Tape *tape) override;
    void backward(const Tape &tape, const Tensor<float> &dy, const State *d_final, Tensor<float> *dx,
                  State *d_initial) override;
    std::vector<Param> params() override;
    double forward_flops(int64_t T, int64_t B) const override;
    double backward_flops(int64_t T, int64_t B) const override;

private:
    QrnnOptions opt_;
    int64_t index_, n_;
    LayerParams<float> params_, grads_;
    std::shared_ptr<CompiledTrainingLayer> training_;
    std::shared_ptr<CompiledLayer> inference_;
    LayerGradsF scratch_;
    // Kept across calls: a fresh [T][B][m] tensor per call costs its page faults (tens of ms at B=64 T=256).
    Tensor<float> c_scratch_, y_scratch_;
};

// Multiply/adds of one plain layer over T steps: forward (conv GEMM + pooling) or backward (two GEMMs of the
// forward's size, dweights and dinput, + the backward scan).
double qrnn_flops(const PoolingVariant &v, int64_t T, int64_t B, int64_t n, int64_t m, int64_t k, bool backward);
// d of the final history (the last k-1 = rows inputs) added to dx, or to dhistory for rows before x.
void add_final_history_grad(const Tensor<float> &dh_final, int64_t rows, LayerGradsF &grads);
// a += b, elementwise (same shape).
void add_into(Tensor<float> &a, const Tensor<float> &b);

// State <-> the runtime's LayerState (copies).
LayerState<float> layer_state(const State &s);
State make_state(LayerState<float> s, int64_t time);

}  // namespace qrnn::nn
