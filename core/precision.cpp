#include "core/precision.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/error.h"

namespace qrnn {

Precision parse_precision(const std::string &name) {
    if (name == "f32") return Precision::f32;
    if (name == "bf16") return Precision::bf16;
    if (name == "int8") return Precision::int8;
    fail("precision must be f32, bf16 or int8 (got '", name, "')");
}

const char *precision_name(Precision p) {
    switch (p) {
        case Precision::bf16: return "bf16";
        case Precision::int8: return "int8";
        default: return "f32";
    }
}

bool has_bf16_dot_product(const Halide::Target &target) {
    return target.arch == Halide::Target::X86 && target.has_feature(Halide::Target::AVX512_SapphireRapids);
}

bool has_int8_dot_product(const Halide::Target &target) { return has_bf16_dot_product(target); }

Halide::Target int8_kernel_target(const Halide::Target &target) {
    using Halide::Target;
    const bool host_avx512 = target.arch == Target::X86 && target.has_feature(Target::AVX512_Cannonlake) &&
                             !target.has_gpu_feature();
    if (!host_avx512 || has_int8_dot_product(target) || !__builtin_cpu_supports("avx512vnni")) return target;
    return target.with_feature(Target::AVX512_SapphireRapids);
}

Halide::Expr gemm_operand(const Halide::Expr &v, Precision precision) {
    return precision == Precision::bf16 && v.type() != Halide::BFloat(16) ? Halide::cast(Halide::BFloat(16), v) : v;
}

float round_to_bf16(float v) {
    if (std::isnan(v)) return v;
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    bits += 0x7fffu + ((bits >> 16) & 1u);  // to nearest, ties to even
    bits &= 0xffff0000u;
    float out;
    std::memcpy(&out, &bits, 4);
    return out;
}

uint16_t bf16_bits(float v) {
    const float rounded = round_to_bf16(v);
    uint32_t bits;
    std::memcpy(&bits, &rounded, 4);
    return static_cast<uint16_t>(bits >> 16);
}

}  // namespace qrnn
