#include "lm/trainable_model.h"

#include <algorithm>

namespace qrnn::lm {

void TrainableModel::zero_grads() {
    for (auto &p : params()) std::fill(p.grad->data.begin(), p.grad->data.end(), 0.0f);
}

}  // namespace qrnn::lm
