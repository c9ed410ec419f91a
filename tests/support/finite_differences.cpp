#include "tests/support/finite_differences.h"

#include <algorithm>
#include <cmath>

#include "runtime/seeded_fill.h"

namespace qrnn::test {

double finite_difference_error(Tensor<double> &v, const Tensor<double> &analytic, const std::function<double()> &loss,
                               double eps) {
    if (v.shape != analytic.shape) return 1e30;
    double max_diff = 0, max_ref = 0;
    for (size_t e = 0; e < v.size(); e++) {
        const double saved = v.data[e];
        v.data[e] = saved + eps;
        const double up = loss();
        v.data[e] = saved - eps;
        const double down = loss();
        v.data[e] = saved;
        max_diff = std::max(max_diff, std::abs((up - down) / (2 * eps) - analytic.data[e]));
        max_ref = std::max(max_ref, std::abs(analytic.data[e]));
    }
    return max_ref > 0 ? max_diff / max_ref : max_diff;
}

FdWorst finite_difference_check(const std::vector<std::pair<std::string, std::pair<Tensor<double> *, const Tensor<double> *>>> &pairs,
                                const std::function<double()> &loss, double eps) {
    FdWorst worst;
    for (auto &[name, p] : pairs) {
        const double rel = finite_difference_error(*p.first, *p.second, loss, eps);
        if (!(rel <= worst.rel)) worst = {rel, name};  // NaN counts as worst
    }
    return worst;
}

double dot(const Tensor<double> &a, const Tensor<double> &b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); i++) s += a.data[i] * b.data[i];
    return s;
}

Tensor<double> seeded_tensor(std::vector<int64_t> shape, uint32_t seed, uint32_t stream, double bound) {
    Tensor<float> t(std::move(shape));
    seeded_fill(t, seed, stream, bound);
    return convert<double>(t);
}

}  // namespace qrnn::test
