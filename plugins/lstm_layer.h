// Trainable LSTM layers (nn::Layer) of the LSTM baselines: what every backend shares (parameters in the
// layouts of runtime/lstm_params.h and their gradients, state {"h", "c"} [B][m], shape checks, FLOP counts).
// A backend (lstm-onednn, lstm-halide, lstm-cudnn) adds forward and backward.
#pragma once
#include "nn/layer.h"
#include "plugins/lstm_params.h"

namespace qrnn {

class LstmLayer : public nn::Layer {
public:
    // Layer `index` of the stack the options describe, parameters seeded as the model plugin's (init_lstm_params).
    LstmLayer(std::string kind, const LstmOptions &opt, int64_t index);
    std::string kind() const override { return kind_; }
    int64_t input_size() const override { return n_; }
    int64_t output_size() const override { return m_; }
    nn::State initial_state(int64_t batch) const override;  // h, c zeros [B][m]
    void set_stochastic(bool) override {}                   // an LSTM baseline has no masks
    bool has_masks() const override { return false; }
    std::vector<nn::Param> params() override;                // w_input, w_recurrent, bias
    double forward_flops(int64_t T, int64_t B) const override;
    // dx and d w_input (2 * 2 * 4m * n), d w_recurrent and d h_{t-1} (2 * 2 * 4m * m), gates and cell (16 m),
    // per step and batch row.
    double backward_flops(int64_t T, int64_t B) const override;

    LstmParams<float> &values() { return value_; }
    const LstmParams<float> &grads() const { return grad_; }

protected:
    // Throws qrnn::Error naming the tensor whose shape is wrong (x [T][B][n], h and c [B][m]).
    void check_forward(const Tensor<float> &x, const nn::State &state) const;
    // The same for backward: dy [T][B][m] of the tape's T and B, d_final's h and c [B][m].
    void check_backward(int64_t T, int64_t B, const Tensor<float> &dy, const nn::State *d_final) const;

    std::string kind_;
    int64_t n_, m_;
    LstmParams<float> value_, grad_;
};

}  // namespace qrnn
