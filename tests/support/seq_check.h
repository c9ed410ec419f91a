// Checks of the variable-length / bidirectional QRNN layer shared by its test files: seeded configs and
// lengths, and a Halide layer stack (nn::SeqQrnnLayer) against the double reference stack.
#pragma once
#include <string>

#include "runtime/config.h"
#include "runtime/tensor.h"

namespace qrnn::test {

struct SeqShape {
    int64_t T, B, n, m, k, L;
};
// Awkward shapes: T = 1, B = 1, odd widths, k > T, 1-3 layers; m = 64, which every CPU target's conv tile
// divides (the conv reads the weights in place).
extern const SeqShape kSeqShapes[6];

// fo pooling, train mode with zoneout 0.3 and dropout 0.25.
ModelConfig seq_config(const SeqShape &s, const std::string &model, const std::string &schedule = "tuned");
// Lengths in [1, T]: b = 0 full, b = 1 of length 1, the others spread.
std::vector<int32_t> seq_test_lengths(int64_t T, int64_t B);

// The stack of cfg (a seq model) with seq_test_lengths, seeded non-zero initial states (time 5 for one
// direction, 0 for two), loss sum(dy * y): max relative error over y and every gradient against
// ref::seq_stack_forward/backward; `worst` names the worst tensor. reference_lengths (tests that the check
// can fail): other lengths for the reference only; reference_precision: the reference's, when not cfg's.
double seq_halide_vs_reference(const ModelConfig &cfg, std::string &worst,
                               const std::vector<int32_t> *reference_lengths = nullptr,
                               const std::string &reference_precision = "");

}  // namespace qrnn::test
