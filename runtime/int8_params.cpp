#include "runtime/int8_params.h"

#include <algorithm>
#include <cmath>

namespace qrnn {

float largest_magnitude(const Tensor<float> &t) {
    float m = 0.0f;
    for (float v : t.data) m = std::max(m, std::abs(v));
    return m;
}

float int8_scale(float max_abs) { return max_abs > 0.0f ? max_abs / kInt8Max : 1.0f; }

int8_t quantize_int8(float x, float inverse_scale) {
    const float q = std::nearbyint(x * inverse_scale);  // the default rounding mode: to nearest, ties to even
    return static_cast<int8_t>(std::clamp(q, -kInt8Max, kInt8Max));
}

Int8LayerParams quantize_layer(const Tensor<float> &w, float input_max_abs) {
    const int64_t G = w.dim(0), k = w.dim(1), n = w.dim(2), m = w.dim(3);
    Tensor<int8_t> weights(w.shape);
    Tensor<float> scales({G, m});
    for (int64_t g = 0; g < G; g++)
        for (int64_t h = 0; h < m; h++) {
            float max_abs = 0.0f;
            for (int64_t j = 0; j < k; j++)
                for (int64_t c = 0; c < n; c++) max_abs = std::max(max_abs, std::abs(w(g, j, c, h)));
            const float scale = int8_scale(max_abs), inverse = 1.0f / scale;
            for (int64_t j = 0; j < k; j++)
                for (int64_t c = 0; c < n; c++) weights(g, j, c, h) = quantize_int8(w(g, j, c, h), inverse);
            scales(g, h) = scale;
        }
    return int8_layer_from(std::move(weights), std::move(scales), int8_scale(input_max_abs));
}

Int8LayerParams int8_layer_from(Tensor<int8_t> weights, Tensor<float> weight_scales, float input_scale) {
    const int64_t G = weights.dim(0), k = weights.dim(1), n = weights.dim(2), m = weights.dim(3);
    Int8LayerParams q{std::move(weights), std::move(weight_scales), Tensor<int32_t>({G, m}), input_scale, Tensor<float>({G, m})};
    for (int64_t g = 0; g < G; g++)
        for (int64_t h = 0; h < m; h++) {
            int32_t sum = 0;
            for (int64_t j = 0; j < k; j++)
                for (int64_t c = 0; c < n; c++) sum += q.weights(g, j, c, h);
            q.weight_sums(g, h) = sum;
            q.dequantize(g, h) = q.weight_scales(g, h) * input_scale;
        }
    return q;
}

}  // namespace qrnn
