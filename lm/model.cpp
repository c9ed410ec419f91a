#include "lm/model.h"

#include <algorithm>

namespace qrnn::lm {

void Model::zero_grads() {
    for (auto &p : params()) std::fill(p.grad->data.begin(), p.grad->data.end(), 0.0f);
}

}  // namespace qrnn::lm
