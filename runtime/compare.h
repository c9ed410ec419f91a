// Comparing float results with the double reference, and checking inputs for NaN/Inf.
#pragma once
#include <string>

#include "runtime/tensor.h"

namespace qrnn {

struct Comparison {
    double max_abs = 0;  // max |y - r|
    double max_ref = 0;  // max |r|
    double rel() const { return max_ref > 0 ? max_abs / max_ref : max_abs; }  // max-norm relative error
    bool finite = true;  // false if y has a NaN/Inf
    void merge(const Comparison &o);
};

// Keeps in `worst` the comparison with the larger rel() (each tensor relative to its own scale), finite of both.
void keep_worst(Comparison &worst, const Comparison &c);

// A usable --verify tolerance: finite and > 0 (NaN, negative or infinite would pass or fail everything).
bool valid_tolerance(double tolerance);

Comparison compare(const Tensor<float> &y, const Tensor<double> &ref);  // throws qrnn::Error on shape mismatch

// Throws qrnn::Error "<what> contains NaN at [i][j]..." for the first non-finite element.
void require_finite(const Tensor<float> &t, const std::string &what);

}  // namespace qrnn
