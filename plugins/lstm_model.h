// Shared base of the LSTM model plugins: seeded data, outputs, verification against ref::lstm_forward.
#pragma once
#include <optional>

#include "plugins/lstm_params.h"
#include "plugins/model.h"

namespace qrnn {

class LstmModel : public Model {
public:
    explicit LstmModel(const ModelConfig &cfg);
    // forward(), fetch_outputs(), then h, h_T, c_T against the double reference (in bf16 with its operands rounded).
    Comparison verify() override;
    double flops() const override { return lstm_flops(cfg_); }

protected:
    virtual void fetch_outputs() {}  // for devices: copy the outputs of the last forward() into h_, h_T_, c_T_
    ModelConfig cfg_;
    LstmData data_;
    Tensor<float> h_, h_T_, c_T_;  // outputs [T][B][m] (last layer), [L][B][m], [L][B][m]: forward() writes them
};

// Registers an LSTM model plugin with the options and checks shared by all of them, its trainable layer and the
// LSTMs' training verifier (the output and every gradient against ref::lstm_stack_backward).
// A backend's bf16 path (`--precision bf16`).
struct LstmBf16 {
    std::function<std::string(const ModelConfig &)> unavailable;  // why a config cannot run here ("" if it can)
    double tolerance = kBf16Tolerance;                            // ModelPlugin::bf16_tolerance
};
// bf16: for a backend with a bf16 path, forward and training (unset: f32 only).
void register_lstm_model(const std::string &name, const std::string &description, std::vector<std::string> targets,
                         std::function<std::string()> unavailable,
                         std::function<std::unique_ptr<Model>(const ModelConfig &)> build, nn::LayerFactory layer,
                         std::optional<LstmBf16> bf16 = {});

// The backends' layers (layer `index` of cfg's stack), for their model records (register_lstm_model).
std::unique_ptr<nn::Layer> make_lstm_onednn_layer(const ModelConfig &cfg, int64_t index);
std::unique_ptr<nn::Layer> make_lstm_halide_layer(const ModelConfig &cfg, int64_t index);

}  // namespace qrnn
