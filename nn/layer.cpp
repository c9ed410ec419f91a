#include "nn/layer.h"

#include <algorithm>

#include "core/error.h"

namespace qrnn::nn {

Tensor<float> &State::at(const std::string &name) {
    return const_cast<Tensor<float> &>(static_cast<const State &>(*this).at(name));
}

const Tensor<float> &State::at(const std::string &name) const {
    auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) fail("layer state has no tensor '", name, "'");
    return tensors[static_cast<size_t>(it - names.begin())];
}

void Layer::zero_grads() {
    for (auto &p : params()) std::fill(p.grad->data.begin(), p.grad->data.end(), 0.0f);
}

}  // namespace qrnn::nn
