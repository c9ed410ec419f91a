// Trainable layer "cnn" (nn::Layer): y = tanh(masked conv of x), the forward by the model plugin's Halide
// pipeline, the backward by plugins/cnn_backward.h (dpre = dy (1 - y^2), then dW, dbias and dx as the QRNN
// backward's GEMMs). No state is carried: every call sees zeros before its sequence, as the model plugin.
#include "core/error.h"
#include "nn/layer.h"
#include "nn/qrnn_layer.h"
#include "plugins/cnn.h"
#include "plugins/cnn_backward.h"
#include "runtime/compiled_layer.h"

namespace qrnn {
namespace {

struct CnnTape : nn::Tape {
    Tensor<float> x, y;  // the forward's input and output
};

class CnnLayer : public nn::Layer {
public:
    CnnLayer(const CnnOptions &opt, int64_t index, Precision precision)
        : n_(opt.layer_input(index)), m_(opt.hidden), k_(opt.window), precision_(precision), value_(init_cnn_params(opt, index)),
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
        cnn_layer_forward(const_cast<Tensor<float> &>(x), value_, y, precision_);
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
        if (dy.shape != tape.y.shape) fail("cnn: dy has shape ", dy.shape_str(), ", expected ", tape.y.shape_str());
        cnn_layer_backward(tape.x, value_.weights, tape.y, dy, scratch_.dweights, scratch_.dbias, dx ? *dx : scratch_.dx,
                           precision_);
        nn::add_into(grad_.weights, scratch_.dweights);
        nn::add_into(grad_.bias, scratch_.dbias);
    }

private:
    int64_t n_, m_, k_;
    Precision precision_;  // the conv GEMMs' operands, forward and backward (f32 or bf16)
    LayerParams<float> value_, grad_;
    // The backward's outputs before they are added into the gradients (and dx when not asked for), kept between
    // calls: allocated afresh, their pages were faulted in on every step (tests/test_buffer_cache.cpp).
    struct Scratch {
        Tensor<float> dweights, dbias, dx;
    } scratch_;
};

}  // namespace

std::unique_ptr<nn::Layer> make_cnn_layer(const ModelConfig &cfg, int64_t index) {
    require_environment_target("cnn", cfg.target);
    return std::make_unique<CnnLayer>(cnn_options(cfg), index, parse_precision(cfg.precision));
}
}  // namespace qrnn
