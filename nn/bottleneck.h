// The dense bottleneck of pQRNN (Kaliamoorthi et al.; TF models' seq_flow_lite pqrnn.py: a dense layer with its
// default ReLU between the projection and the QRNN stack): y = relu(x W + b) at each sequence's real steps,
// x [T][B][N] -> y [T][B][n], W [N][n], b [n]; steps past a sequence's length stay zero in y and give no
// gradient. (seq_flow_lite's batch normalisation and quantisation of this layer are left out.)
// Rows of x that are zero are skipped (the ternary projection is half zeros); every sum runs in a fixed order,
// so results are deterministic. Reference: reference/bottleneck.h.
#pragma once
#include <cstdint>
#include <vector>

#include "nn/layer.h"

namespace qrnn::nn {

class Bottleneck {
public:
    Bottleneck() = default;
    // W uniform in +-1/sqrt(N) (drawn from `stream` of `seed`, core/streams.h), b zero.
    Bottleneck(int64_t in, int64_t out, uint32_t seed, uint32_t stream);
    int64_t input_size() const { return weights_.dim(0); }
    int64_t output_size() const { return weights_.dim(1); }
    std::vector<Param> params();  // "bottleneck/weights" [N][n], "bottleneck/bias" [n]
    void zero_grads();
    // y = relu(x W + b) for t < lengths[b], 0 past (y is reshaped to [T][B][n] when it differs).
    void forward(const Tensor<float> &x, const std::vector<int64_t> &lengths, Tensor<float> &y) const;
    // dW += x^T (dy * relu'(.)), db += the sum over real steps of dy * relu'(.); relu' read from the forward's y
    // (y > 0), 0 at 0. Throws qrnn::Error on mismatched shapes.
    void backward(const Tensor<float> &x, const std::vector<int64_t> &lengths, const Tensor<float> &y,
                  const Tensor<float> &dy);

private:
    Tensor<float> weights_, bias_, d_weights_, d_bias_;
};

}  // namespace qrnn::nn
