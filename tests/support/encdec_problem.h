// Seeded encoder-decoder problems on awkward shapes (T = 1, B = 1, odd widths, k > T, 2 layers, source and
// target lengths different, variable source lengths) for the reference's finite-difference checks and the
// float model's tests against the reference.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "reference/encoder_decoder.h"

namespace qrnn::test {

struct EncDecShape {
    int64_t S, T, B, n_src, n_tgt, m, k, L;
    std::vector<int64_t> lengths;  // one per sequence, in [1, S]
};
const std::vector<EncDecShape> &encdec_shapes();

struct EncDecProblem {
    EncDecConfig cfg;
    EncDecParams<double> params;
    Tensor<double> source, target, dout;  // [S][B][n_src], [T][B][n_tgt], [T][B][m]
    std::vector<int64_t> lengths;
};
// Masks on (zoneout 0.3, dropout 0.25, train mode) when stochastic.
EncDecProblem make_encdec_problem(const EncDecShape &s, const std::string &pooling, bool attention, bool stochastic);

// L = sum(dout * out) of the reference forward.
double encdec_loss(const EncDecProblem &p);

// (name, (value, gradient)) of every input and parameter: "source", "target", "encoder_<l>/{weights,bias}",
// "decoder_<l>/{weights,bias}", "condition_<l>", "attention".
using GradPairs = std::vector<std::pair<std::string, std::pair<Tensor<double> *, const Tensor<double> *>>>;
GradPairs encdec_grad_pairs(EncDecProblem &p, const ref::EncDecGrads &g);

// The float model (nn/encoder_decoder.h, for `target`; empty: the host) on the problem's parameters against
// the reference: output, attention weights and every gradient of sum(dout * out), each as max|float - ref| /
// max|ref|; the worst and its name.
struct Worst {
    double rel = 0;
    std::string name;
    void add(const std::string &n, double r);
};
Worst float_vs_reference(EncDecProblem &p, const std::string &target);

}  // namespace qrnn::test
