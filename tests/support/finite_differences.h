// Central finite differences in double: the generic check behind the baselines' gradient tests.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/tensor.h"

namespace qrnn::test {

// max_e |(loss(v + eps e) - loss(v - eps e)) / 2eps - analytic[e]| / max|analytic| over every element e of v
// (perturbed in place, then restored); absolute when the analytic gradient is all zeros; huge on a shape mismatch.
double finite_difference_error(Tensor<double> &v, const Tensor<double> &analytic, const std::function<double()> &loss,
                               double eps = 1e-6);

// The check over named (value, analytic gradient) pairs: the worst relative error and the name it belongs to.
struct FdWorst {
    double rel = 0;
    std::string name;
};
FdWorst finite_difference_check(const std::vector<std::pair<std::string, std::pair<Tensor<double> *, const Tensor<double> *>>> &pairs,
                                const std::function<double()> &loss, double eps = 1e-6);

// sum(a * b) over all elements (the losses of the gradient checks are such dot products).
double dot(const Tensor<double> &a, const Tensor<double> &b);
// A tensor of the given shape, uniform in [-bound, bound), seeded (platform-independent).
Tensor<double> seeded_tensor(std::vector<int64_t> shape, uint32_t seed, uint32_t stream, double bound = 1.0);

}  // namespace qrnn::test
