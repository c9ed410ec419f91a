// The precision of a layer's GEMM operands: f32, or bf16 (weights and inputs rounded to bfloat16 where they are
// produced, products widened to f32 and accumulated in f32; biases, activations and the scan stay f32).
// docs/precision.md gives the error bound the tests use.
#pragma once
#include <Halide.h>

#include <cstdint>
#include <string>

namespace qrnn {

enum class Precision { f32, bf16 };

// "f32" or "bf16"; throws qrnn::Error naming the value otherwise.
Precision parse_precision(const std::string &name);
const char *precision_name(Precision p);

// Whether the target has the bf16 dot product with f32 accumulation (vdpbf16ps: Halide's avx512_sapphirerapids
// feature, which it sets for a host with avx512_bf16). Without it bf16 is emulated: correct, slower than f32.
bool has_bf16_dot_product(const Halide::Target &target);

// v rounded to the nearest bfloat16 (ties to even), as f32: what the bf16 path's operands hold.
float round_to_bf16(float v);
uint16_t bf16_bits(float v);  // the bfloat16 round_to_bf16(v) holds: its upper 16 bits

// v as a GEMM operand of `precision` (a Func's value where the operand is produced, stored so): itself, or rounded to
// bfloat16 (unless it is already).
Halide::Expr gemm_operand(const Halide::Expr &v, Precision precision);

}  // namespace qrnn
