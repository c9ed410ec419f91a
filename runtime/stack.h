// A stack of QRNN layers run through compiled Halide layers, with state carried between calls.
#pragma once
#include <memory>

#include "runtime/compiled_layer.h"

namespace qrnn {

struct StackResult {
    const Tensor<float> &h;  // [T][B][m] of the last layer; valid until the next forward
    Tensor<float> c_T;  // [L][B][m]
};

class QrnnStack {
public:
    QrnnStack(ModelConfig cfg, std::vector<LayerParams<float>> params, const Knobs &knobs = {});
    // Runs x [T][B][n] from `state` and advances it (history, c, time).
    StackResult forward(const Tensor<float> &x, StackState<float> &state);
    const ModelConfig &config() const { return cfg_; }
    const std::vector<LayerParams<float>> &params() const { return params_; }
    double flops(int64_t T) const;  // conv GEMM + pooling multiply/adds of one forward over T steps

private:
    ModelConfig cfg_;
    std::vector<LayerParams<float>> params_;
    std::shared_ptr<CompiledLayer> layer_;
    std::vector<Tensor<float>> h_, c_;  // per-layer outputs, reused across calls of the same T
};

}  // namespace qrnn
