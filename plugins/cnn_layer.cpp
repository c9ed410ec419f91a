// Trainable layer "cnn" (nn::Layer): y = tanh(masked conv of x), the forward by the model plugin's Halide
// pipeline, the backward by the GEMMs of plugins/halide_gemms.h over all steps at once:
//   dpre = dy * (1 - y^2)                                                         (host loop)
//   d weights[0][j][c][h], d bias: weight_grad of dpre with the im2col of x        (x[t-(k-1)+j][b][c] in
//       column j*n + c, zeros before the sequence, a column of ones for the bias)
//   dx[s][b][c] = sum_{j,h} dpre[s+(k-1)-j][b][h] w[0][j][c][h]: row_gemm of the im2col of dpre (shifted
//       forward in time, zeros after the sequence) with the weights transposed.
// No state is carried: every call sees zeros before its sequence, as the model plugin.
#include "core/error.h"
#include "nn/layer.h"
#include "plugins/cnn.h"
#include "plugins/halide_gemms.h"

namespace qrnn {
namespace {

struct CnnTape : nn::Tape {
    Tensor<float> x, y;  // the forward's input and output
};

class CnnLayer : public nn::Layer {
public:
    CnnLayer(const CnnOptions &opt, int64_t index)
        : n_(opt.layer_input(index)), m_(opt.hidden), k_(opt.window), value_(init_cnn_params(opt, index)),
          grad_{Tensor<float>(value_.weights.shape), Tensor<float>(value_.bias.shape)} {}

    std::string kind() const override { return "cnn"; }
    int64_t input_size() const override { return n_; }
    int64_t output_size() const override { return m_; }
    nn::State initial_state(int64_t) const override { return {}; }
    void set_stochastic(bool) override {}  // no masks
    bool has_masks() const override { return false; }
    std::unique_ptr<nn::Tape> make_tape() const override { return std::make_unique<CnnTape>(); }
    std::vector<nn::Param> params() override {
        return {{"weights", &value_.weights, &grad_.weights}, {"bias", &value_.bias, &grad_.bias}};
    }
    double forward_flops(int64_t T, int64_t B) const override {
        return static_cast<double>(T) * B * cnn_layer_flops(n_, m_, k_);
    }
    // d weights and dx (2 * 2 n k m), d bias and tanh' (3 m) per step and batch row.
    double backward_flops(int64_t T, int64_t B) const override {
        return static_cast<double>(T) * B * m_ * (4.0 * n_ * k_ + 3.0);
    }

    void forward(const Tensor<float> &x, nn::State &state, Tensor<float> &y, nn::Tape *tape_base) override {
        if (x.shape.size() != 3 || x.dim(2) != n_ || x.dim(0) < 1 || x.dim(1) < 1)
            fail("cnn: input has shape ", x.shape_str(), ", expected [T][B][", n_, "]");
        const int64_t T = x.dim(0), B = x.dim(1);
        ensure_shape(y, {T, B, m_});
        cnn_layer_forward(const_cast<Tensor<float> &>(x), value_, y);
        if (tape_base) {
            auto &tape = dynamic_cast<CnnTape &>(*tape_base);
            tape.x = x, tape.y = y;
        }
        state.time += T;
    }

    void backward(const nn::Tape &tape_base, const Tensor<float> &dy, const nn::State *, Tensor<float> *dx,
                  nn::State *) override {
        const auto &tape = dynamic_cast<const CnnTape &>(tape_base);
        if (tape.y.shape.empty()) fail("cnn: backward needs the tape of a forward pass");
        const int64_t T = tape.y.dim(0), B = tape.y.dim(1), n = n_, m = m_, k = k_;
        if (dy.shape != tape.y.shape) fail("cnn: dy has shape ", dy.shape_str(), ", expected ", tape.y.shape_str());
        const int64_t mp = round_up(m, gemm_tile());
        Tensor<float> &dpre = ensure_shape(scratch_.dpre, {T, B, mp});
        for (int64_t t = 0; t < T; t++)
            for (int64_t b = 0; b < B; b++)
                for (int64_t h = 0; h < m; h++) dpre(t, b, h) = dy(t, b, h) * (1 - tape.y(t, b, h) * tape.y(t, b, h));

        // d weights and d bias.
        const int64_t ce = round_up(k * n + 1, gemm_rows());
        Tensor<float> &x_col = ensure_shape(scratch_.x_col, {T, B, ce}), &dw = ensure_shape(scratch_.dw, {ce, mp});
        for (int64_t t = 0; t < T; t++)
            for (int64_t b = 0; b < B; b++) {
                for (int64_t j = 0; j < k; j++) {
                    const int64_t src = t - (k - 1) + j;
                    if (src >= 0) std::copy(&tape.x(src, b, 0), &tape.x(src, b, 0) + n, &x_col(t, b, j * n));
                }
                x_col(t, b, k * n) = 1.0f;
            }
        Halide::Buffer<float> dw_out = view(dw);
        weight_grad(view(dpre), view(x_col), dw_out);
        for (int64_t r = 0; r < k * n; r++)
            for (int64_t h = 0; h < m; h++) grad_.weights.data[r * m + h] += dw(r, h);
        for (int64_t h = 0; h < m; h++) grad_.bias(0, h) += dw(k * n, h);

        if (!dx) return;
        const int64_t np = round_up(n, gemm_tile()), Bp = round_up(B, gemm_rows());
        Tensor<float> &d_col = ensure_shape(scratch_.d_col, {T, B, k * mp}), &w_t = ensure_shape(scratch_.w_t, {k * mp, 1, np}),
                      &no_bias = ensure_shape(scratch_.no_bias, {1, np}), &dx_pad = ensure_shape(scratch_.dx_pad, {T, Bp, 1, np});
        for (int64_t s = 0; s < T; s++)
            for (int64_t j = 0; j < k; j++) {
                const int64_t t = s + (k - 1) - j;
                if (t < T)
                    for (int64_t b = 0; b < B; b++) std::copy(&dpre(t, b, 0), &dpre(t, b, 0) + m, &d_col(s, b, j * mp));
            }
        for (int64_t j = 0; j < k; j++)
            for (int64_t c = 0; c < n; c++)
                for (int64_t h = 0; h < m; h++) w_t(j * mp + h, 0, c) = value_.weights(0, j, c, h);
        Halide::Buffer<float> dx_out = view(dx_pad);
        row_gemm(view(w_t), view(d_col), view(no_bias), dx_out);
        ensure_shape(*dx, {T, B, n});
        for (int64_t t = 0; t < T; t++)
            for (int64_t b = 0; b < B; b++) std::copy(&dx_pad(t, b, 0, 0), &dx_pad(t, b, 0, 0) + n, &(*dx)(t, b, 0));
    }

private:
    int64_t n_, m_, k_;
    LayerParams<float> value_, grad_;
    // The backward's work tensors, kept between calls: allocated afresh, their pages faulted in on every step
    // (~3,600 faults, 45-53 ms a step instead of 14 at B=16 T=128 on the 2-core VM). Each call of one shape writes
    // the same elements, so the padding and the zeros before/after the sequence stay as allocated (zero).
    struct Scratch {
        Tensor<float> dpre, x_col, dw, d_col, w_t, no_bias, dx_pad;
    } scratch_;
};

const bool registered = [] {
    nn::register_layer_factory("cnn", [](const ModelConfig &cfg, int64_t index) -> std::unique_ptr<nn::Layer> {
        return std::make_unique<CnnLayer>(cnn_options(cfg), index);
    });
    return true;
}();
}  // namespace
}  // namespace qrnn
