#include "tests/support/classifier_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace qrnn::test {

double classifier_gradient_error(lm::SequenceClassifier &clf, const nn::ClassifyBatch &batch, size_t stride,
                                 double bound, const std::string &what) {
    return classifier_gradient_error(clf, [&](bool train) { return clf.loss(batch, train); }, stride, bound, what);
}

double classifier_gradient_error(lm::SequenceClassifier &clf, const std::function<double(bool train)> &loss, size_t stride,
                                 double bound, const std::string &what) {
    loss(true);
    double worst = 0;
    for (const nn::Param &p : clf.params()) {
        const Tensor<float> grad = *p.grad;
        double scale = 1e-3;
        for (float g : grad.data) scale = std::max(scale, std::abs(static_cast<double>(g)));
        for (size_t i = 0; i < p.value->size(); i += stride) {
            const float saved = p.value->data[i], eps = 1e-2f;
            p.value->data[i] = saved + eps;
            const double up = loss(false);
            p.value->data[i] = saved - eps;
            const double down = loss(false);
            p.value->data[i] = saved;
            const double err = std::abs((up - down) / (2 * eps) - grad.data[i]) / scale;
            EXPECT_LE(err, bound) << what << " " << p.name << "[" << i << "]";
            worst = std::max(worst, err);
        }
    }
    return worst;
}

}  // namespace qrnn::test
