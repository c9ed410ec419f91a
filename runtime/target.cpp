#include "runtime/target.h"

#include "core/error.h"

namespace qrnn {

Halide::Target parse_target(const std::string &target) {
    if (target.empty()) return Halide::get_jit_target_from_environment();
    if (!Halide::Target::validate_target_string(target))
        fail("invalid Halide target '", target, "' (e.g. host, host-avx512, host-cuda-cuda_capability_80)");
    const Halide::Target t(target);
    require_runnable_target(target, t);
    return t;
}

void require_runnable_target(const std::string &text, const Halide::Target &t) {
    using F = Halide::Target::Feature;
    const Halide::Target host = Halide::get_host_target();
    const std::string host_name = host.without_feature(Halide::Target::JIT).to_string();
    if (t.arch != host.arch || t.bits != host.bits || t.os != host.os)
        fail("target '", text, "' cannot run on this machine (", host_name,
             "): qrnn JIT-compiles and runs here; use host or a target of this machine's CPU");
    for (F f : {F::SSE41, F::AVX, F::AVX2, F::FMA, F::FMA4, F::F16C, F::AVX512, F::AVX512_KNL, F::AVX512_Skylake,
                F::AVX512_Cannonlake, F::AVX512_SapphireRapids, F::SVE, F::SVE2, F::ARMDotProd, F::ARMFp16, F::ARMv81a})
        if (t.has_feature(f) && !host.has_feature(f))
            fail("target '", text, "' asks for a CPU feature this machine lacks (", host_name, ")");
}

}  // namespace qrnn
