#include "nn/int8_calibration.h"

#include <algorithm>

#include "core/error.h"

namespace qrnn::nn {

void Int8Calibration::set(bool on, const Tensor<float> &weights) {
    if (on) {
        calibrating_ = true, input_max_abs_ = 0.0f;
        return;
    }
    if (!calibrating_) fail("int8 calibration ended that had not begun");
    calibrating_ = false;
    params_ = quantize_layer(weights, input_max_abs_);
}

void Int8Calibration::observe(const Tensor<float> &x) {
    input_max_abs_ = std::max(input_max_abs_, largest_magnitude(x));
}

const Int8LayerParams &Int8Calibration::params(int64_t layer) const {
    if (!params_) fail("QRNN layer ", layer, ": int8 forward before calibration (nn::LayerStack::calibrate_int8)");
    return *params_;
}

void Int8Calibration::load(Int8LayerParams params, const Tensor<float> &weights, int64_t layer) {
    if (params.weights.shape != weights.shape)
        fail("QRNN layer ", layer, ": int8 weights ", params.weights.shape_str(), " for weights ", weights.shape_str());
    calibrating_ = false;
    params_ = std::move(params);
}

}  // namespace qrnn::nn
