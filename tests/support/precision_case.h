// Shared by the reduced-precision tests (tests/test_bf16.cpp, tests/test_int8.cpp): a layer's configuration in a
// precision, and reading what a pipeline compiles to on a target.
#pragma once
#include <Halide.h>

#include <string>
#include <vector>

#include "core/precision.h"
#include "runtime/config.h"
#include "runtime/tensor.h"

namespace qrnn::test {

constexpr double kF32Tolerance = 1e-5;  // as tests/test_layer.cpp: float32 arithmetic vs float64

struct LayerCase {
    int64_t T, B, n, m;
};

// One QRNN layer (model qrnn) of `pooling`, window k, the case's shape, in `precision`.
ModelConfig precision_config(const std::string &precision, const std::string &pooling, int64_t k, const LayerCase &s,
                             const std::string &schedule = "tuned");

double max_abs(const Tensor<double> &a);

// The assembly `p` compiles to on `target` (written to a temporary file named after `name` and the target). On a
// target with avx512_sapphirerapids it also fails the test if the assembly holds instructions_amd_lacks
// (runtime/amd_isa_check.h).
std::string assembly_of(Halide::Pipeline p, const std::vector<Halide::Argument> &args, const Halide::Target &target,
                        const std::string &name);
size_t count_of(const std::string &text, const std::string &word);  // occurrences, overlaps included
// Halide's avx512_sapphirerapids (the bf16 and int8 dot products) and a plain AVX2 target.
constexpr const char *kDotTarget = "x86-64-linux-avx-avx2-avx512-avx512_cannonlake-avx512_sapphirerapids-avx512_skylake-f16c-fma-sse41";
constexpr const char *kAvx2Target = "x86-64-linux-avx-avx2-f16c-fma-sse41";
// The "tuned" layer's forward (pooling fo) in `precision` on the target named, as assembly.
std::string layer_assembly(Precision precision, const std::string &target_name);

}  // namespace qrnn::test
