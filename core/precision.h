// The precision of a layer's GEMM operands: f32; bf16 (weights and inputs rounded to bfloat16 where they are
// produced, products widened to f32 and accumulated in f32; biases, activations and the scan stay f32); or int8, for
// inference (weights int8 per output channel, the input int8 per tensor, products summed in int32, then
// dequantized; the bias, activations and the scan stay f32). docs/precision.md and docs/int8.md.
#pragma once
#include <Halide.h>

#include <cstdint>
#include <string>

namespace qrnn {

enum class Precision { f32, bf16, int8 };

// "f32", "bf16" or "int8"; throws qrnn::Error naming the value otherwise.
Precision parse_precision(const std::string &name);
const char *precision_name(Precision p);

// Whether the target has the bf16 dot product with f32 accumulation (vdpbf16ps: Halide's avx512_sapphirerapids
// feature, which it sets for a host with avx512_bf16). Without it bf16 is emulated: correct, slower than f32.
bool has_bf16_dot_product(const Halide::Target &target);
// Whether the target has the int8 dot product with int32 accumulation (vpdpbusd). Halide 14 emits it under the same
// feature as vdpbf16ps, so this is has_bf16_dot_product; int8_kernel_target adds the feature where only VNNI is.
bool has_int8_dot_product(const Halide::Target &target);
// The target an int8 pipeline compiles for: `target` with Halide's avx512_sapphirerapids added when it is this
// host's AVX-512 target (avx512_cannonlake) and the CPU has avx512_vnni (e.g. a CPU whose CPUID hides avx512_bf16):
// an int8 pipeline holds no bf16 operation, so only VNNI of that feature's instructions is used. Else `target`.
Halide::Target int8_kernel_target(const Halide::Target &target);

// v rounded to the nearest bfloat16 (ties to even), as f32: what the bf16 path's operands hold.
float round_to_bf16(float v);
uint16_t bf16_bits(float v);  // the bfloat16 round_to_bf16(v) holds: its upper 16 bits

// v as a GEMM operand of `precision` (a Func's value where the operand is produced, stored so): itself, or rounded to
// bfloat16 (unless it is already).
Halide::Expr gemm_operand(const Halide::Expr &v, Precision precision);

}  // namespace qrnn
