// Finite-difference checks of the sequence classifier (tasks/seq_classifier.h) shared by its test files.
#pragma once
#include <functional>
#include <string>

#include "tasks/seq_classifier.h"

namespace qrnn::test {

// The classifier's gradients of `batch` (clf.loss(batch, true)) against central differences of its loss (eps 1e-2) at
// every `stride`-th element of every parameter, each error relative to its parameter's largest gradient (at least
// 1e-3). A gtest failure names `what`, the parameter and the element above `bound`; returns the worst error.
double classifier_gradient_error(lm::SequenceClassifier &clf, const nn::ClassifyBatch &batch, size_t stride,
                                 double bound, const std::string &what);
// The same for any loss of the classifier: loss(true) computes it and every gradient, loss(false) only the value.
double classifier_gradient_error(lm::SequenceClassifier &clf, const std::function<double(bool train)> &loss, size_t stride,
                                 double bound, const std::string &what);

}  // namespace qrnn::test
