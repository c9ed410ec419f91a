// A layer's int8 calibration (docs/int8.md), for the layers that run int8 inference (nn::Layer::set_int8_calibration):
// while on, the layer's forwards run in f32 and each input's largest |x| is recorded; turning it off quantizes the
// layer's weights with that range (runtime/int8_params.h).
#pragma once
#include <optional>

#include "runtime/int8_params.h"

namespace qrnn::nn {

class Int8Calibration {
public:
    // On: starts recording (forgetting an earlier range). Off: quantizes `weights` ([G][k][n][m]); throws
    // qrnn::Error if it was not on.
    void set(bool on, const Tensor<float> &weights);
    bool calibrating() const { return calibrating_; }
    void observe(const Tensor<float> &x);  // while calibrating: the input of one forward
    // The quantized parameters; throws qrnn::Error naming the layer before a calibration ended.
    const Int8LayerParams &params(int64_t layer) const;
    const Int8LayerParams *quantized() const { return params_ ? &*params_ : nullptr; }  // null before
    // Sets them (e.g. a checkpoint's) instead of a calibration; throws qrnn::Error naming the layer unless their
    // weights have the shape of `weights`.
    void load(Int8LayerParams params, const Tensor<float> &weights, int64_t layer);

private:
    std::optional<Int8LayerParams> params_;
    bool calibrating_ = false;
    float input_max_abs_ = 0.0f;
};

}  // namespace qrnn::nn
