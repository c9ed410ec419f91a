#include "runtime/compare.h"

#include <cmath>

#include "core/error.h"
#include "runtime/config.h"

namespace qrnn {

void Comparison::merge(const Comparison &o) {
    max_abs = std::max(max_abs, o.max_abs);
    max_ref = std::max(max_ref, o.max_ref);
    finite = finite && o.finite;
}

void keep_worst(Comparison &worst, const Comparison &c) {
    bool finite = worst.finite && c.finite;
    if (c.rel() > worst.rel()) worst = c;
    worst.finite = finite;
}

bool valid_tolerance(double tolerance) { return std::isfinite(tolerance) && tolerance > 0; }

double default_tolerance(const ModelConfig &config) {
    if (config.precision == "bf16") return kBf16Tolerance;
    return config.precision == "int8" ? kInt8Tolerance : kDefaultTolerance;
}

Comparison compare(const Tensor<float> &y, const Tensor<double> &ref) {
    if (y.shape != ref.shape) fail("result shape ", y.shape_str(), " differs from reference shape ", ref.shape_str());
    Comparison c;
    for (size_t i = 0; i < y.size(); i++) {
        if (!std::isfinite(y.data[i])) c.finite = false;
        c.max_abs = std::max(c.max_abs, std::abs(static_cast<double>(y.data[i]) - ref.data[i]));
        c.max_ref = std::max(c.max_ref, std::abs(ref.data[i]));
    }
    if (!c.finite) c.max_abs = INFINITY;
    return c;
}

void require_finite(const Tensor<float> &t, const std::string &what) {
    for (size_t i = 0; i < t.size(); i++) {
        if (std::isfinite(t.data[i])) continue;
        std::string index;
        size_t rest = i;
        for (size_t d = t.shape.size(); d-- > 0;) {
            index = "[" + std::to_string(rest % t.shape[d]) + "]" + index;
            rest /= t.shape[d];
        }
        fail(what, " contains ", std::isnan(t.data[i]) ? "NaN" : "Inf", " at ", index);
    }
}

}  // namespace qrnn
