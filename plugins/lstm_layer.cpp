#include "plugins/lstm_layer.h"

#include "core/error.h"

namespace qrnn {
namespace {
void check_shape(const Tensor<float> &t, const std::vector<int64_t> &want, const std::string &layer, const char *what) {
    if (t.shape != want) fail(layer, ": ", what, " has shape ", t.shape_str(), ", expected ", Tensor<float>(want).shape_str());
}
}  // namespace

LstmLayer::LstmLayer(std::string kind, const LstmOptions &opt, int64_t index)
    : kind_(std::move(kind)), n_(opt.layer_input(index)), m_(opt.hidden), value_(init_lstm_params(opt, index)),
      grad_{Tensor<float>(value_.w_input.shape), Tensor<float>(value_.w_recurrent.shape), Tensor<float>(value_.bias.shape)} {}

nn::State LstmLayer::initial_state(int64_t batch) const {
    return {{"h", "c"}, {Tensor<float>({batch, m_}), Tensor<float>({batch, m_})}, 0};
}

std::vector<nn::Param> LstmLayer::params() {
    return {{"w_input", &value_.w_input, &grad_.w_input},
            {"w_recurrent", &value_.w_recurrent, &grad_.w_recurrent},
            {"bias", &value_.bias, &grad_.bias}};
}

double LstmLayer::forward_flops(int64_t T, int64_t B) const {
    return static_cast<double>(T) * B * lstm_layer_flops(n_, m_);
}

double LstmLayer::backward_flops(int64_t T, int64_t B) const {
    return static_cast<double>(T) * B * (4.0 * kLstmGates * m_ * (n_ + m_) + 16.0 * m_);
}

void LstmLayer::check_forward(const Tensor<float> &x, const nn::State &state) const {
    if (x.shape.size() != 3 || x.dim(2) != n_ || x.dim(0) < 1 || x.dim(1) < 1)
        fail(kind_, ": input has shape ", x.shape_str(), ", expected [T][B][", n_, "]");
    for (const char *name : {"h", "c"}) check_shape(state.at(name), {x.dim(1), m_}, kind_, name);
}

void LstmLayer::check_backward(int64_t T, int64_t B, const Tensor<float> &dy, const nn::State *d_final) const {
    check_shape(dy, {T, B, m_}, kind_, "dy");
    if (d_final)
        for (const char *name : {"h", "c"}) check_shape(d_final->at(name), {B, m_}, kind_, name);
}

}  // namespace qrnn
