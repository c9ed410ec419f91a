// The QRNN layer as an nn::Layer: forward without a tape (inference, `qrnn run`) through the compiled layer of its
// schedule (runtime/compiled_layer.h), forward with a tape and backward through its compiled training pipelines
// (runtime/compiled_training.h); each compiled on first use. The layer of model "qrnn" (plugins/model_qrnn.cpp).
// State: "history" [max(k-1,1)][B][n] and "c" [B][m]. Params: "weights" [G][k][n][m], "bias" [G][m].
#pragma once
#include "nn/int8_calibration.h"
#include "nn/layer.h"
#include "runtime/compiled_training.h"

namespace qrnn::nn {

class QrnnLayer : public Layer {
public:
    // Layer `index` of the stack the options describe, parameters initialised as init_params(cfg) does.
    // options: the encoder-decoder's extra inputs/outputs of the training pipelines (runtime/compiled_training.h).
    QrnnLayer(const QrnnOptions &opt, int64_t index, const TrainingLayerOptions &options = {});
    QrnnLayer(const ModelConfig &cfg, int64_t index, const TrainingLayerOptions &options = {})
        : QrnnLayer(qrnn_options(cfg), index, options) {}
    std::string kind() const override { return "qrnn"; }
    int64_t input_size() const override { return n_; }
    int64_t output_size() const override { return opt_.hidden; }
    State initial_state(int64_t batch) const override;
    void set_stochastic(bool on) override { opt_.stochastic = on; }
    void set_mask_draw(uint64_t draw) override { opt_.mask_draw = draw; }
    void set_knobs(const Knobs &knobs) override { knobs_ = knobs; }
    void prepare_training() override { training(); }
    void set_int8_calibration(bool on) override;
    const Int8LayerParams *quantized() const override { return int8_.quantized(); }
    void set_quantized(Int8LayerParams p) override;
    const Int8LayerParams &int8_params() const;  // throws qrnn::Error before calibration
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
    // What a tape of this layer recorded: the cell states c [T][B][m]; activated gate `letter` [T][B][m] (into out).
    static const Tensor<float> &tape_cell(const Tape &tape);
    LayerParams<float> &layer_params() { return params_; }
    void tape_gate(const Tape &tape, char letter, Tensor<float> &out) const;
    std::vector<Param> params() override;
    double forward_flops(int64_t T, int64_t B) const override;
    double backward_flops(int64_t T, int64_t B) const override;

private:
    CompiledTrainingLayer &training();  // compiled on first use
    void run_inference(LayerCall &call, const LayerShape &shape);

    QrnnOptions opt_;
    int64_t index_, n_;
    Knobs knobs_;
    TrainingLayerOptions training_options_;
    LayerParams<float> params_, grads_;
    std::shared_ptr<CompiledTrainingLayer> training_;
    std::shared_ptr<CompiledLayer> inference_, calibration_;
    Int8Calibration int8_;  // int8 (opt_.precision): while calibrating, forwards run in f32
    LayerGradsF scratch_;
    // Kept across calls: a fresh [T][B][m] tensor per call costs its page faults (tens of ms at B=64 T=256).
    Tensor<float> c_scratch_, y_scratch_;
    std::unique_ptr<Tape> scratch_tape_;  // forward without a tape of a layer that has no inference pipeline
};

// Multiply/adds of one plain layer over T steps: forward (conv GEMM + pooling) or backward (two GEMMs of the
// forward's size, dweights and dinput, + the backward scan).
double qrnn_flops(const PoolingVariant &v, int64_t T, int64_t B, int64_t n, int64_t m, int64_t k, bool backward);
// d of the final history (the last k-1 = rows inputs) added to dx, or to dhistory for rows before x.
void add_final_history_grad(const Tensor<float> &dh_final, int64_t rows, LayerGradsF &grads);
// a += b, elementwise (same shape).
void add_into(Tensor<float> &a, const Tensor<float> &b);

// State <-> the compiled layer's LayerState (copies).
LayerState<float> layer_state(const State &s);
State make_state(LayerState<float> s, int64_t time);

}  // namespace qrnn::nn
