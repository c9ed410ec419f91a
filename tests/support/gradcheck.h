// Gradient checks of the QRNN stack: a seeded problem (input, parameters, a non-zero carried state, output
// gradients), the scalar loss L = sum(dh * h) + sum(dc_T * c_T) whose gradients the backward computes, and
// central finite differences of L in double against the reference backward.
#pragma once
#include <string>

#include "reference/qrnn_backward.h"

namespace qrnn::test {

struct GradProblem {
    ModelConfig cfg;
    std::vector<LayerParams<double>> params;
    Tensor<double> x;
    StackState<double> state;  // random c0 and history, time != 0 (masks at an offset)
    Tensor<double> dh, dc_T;    // dL/dh [T][B][m] of the last layer, dL/dc_T [L][B][m]
};
GradProblem make_grad_problem(const ModelConfig &cfg);

// Float copies of the problem (for the Halide backward), and their values back in double.
std::vector<LayerParams<float>> float_params(const GradProblem &p);
StackState<float> float_state(const GradProblem &p);

double stack_loss(const GradProblem &p);

// Every gradient of the problem, named: "dx", "layer_<l>/{weights,bias,c0,history}".
std::vector<std::pair<std::string, const Tensor<double> *>> named_grads(const ref::StackGrads &g);

// Max over every gradient tensor of max|fd - analytic| / max|analytic| (central differences, step eps),
// and the name of the worst tensor.
struct FdResult {
    double rel = 0;
    std::string worst;
};
FdResult finite_difference_check(const GradProblem &p, const ref::StackGrads &analytic, double eps = 1e-5);

// Loads the example plugin (pooling "fo-tanh", with its backward) once per process.
void load_example_plugin();

}  // namespace qrnn::test
