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

struct ModelConfig;
constexpr double kDefaultTolerance = 1e-4;
// A bf16 run's: wherever its reference rounds a value it computed itself (a training step's dpre, a stack's layer
// input, an LSTM's h: double there, f32 here), a value within that difference of a rounding boundary rounds a whole
// bf16 step apart (docs/precision.md; measured up to 4.1e-4: a training step at B=3 T=7, where dW sums few products).
constexpr double kBf16Tolerance = 2e-3;
// A bf16 run of a library that rounds values of its own where its reference cannot follow (lstm-onednn: h, the gates'
// gradients; ModelPlugin::bf16_tolerance): held to the plain f32 reference within the bound of a bf16 training step
// against f32 (docs/precision.md): 4 x 2^-8 of the largest value (measured 6.3e-3: a training step of 2 layers at T=9 B=4).
constexpr double kBf16UnroundedTolerance = 4.0 / 256;
// An int8 run's, against the reference that quantizes as the kernel does (docs/int8.md): a layer's input that the
// reference computed itself (a stack's second layer reads h, double there, f32 here) can quantize one step apart.
constexpr double kInt8Tolerance = 2e-3;
// The default tolerance of a configuration's precision (a model may hold bf16 to more: verify_tolerance, plugins/model.h).
double default_tolerance(const ModelConfig &config);

Comparison compare(const Tensor<float> &y, const Tensor<double> &ref);  // throws qrnn::Error on shape mismatch

// Throws qrnn::Error "<what> contains NaN at [i][j]..." for the first non-finite element.
void require_finite(const Tensor<float> &t, const std::string &what);

}  // namespace qrnn
