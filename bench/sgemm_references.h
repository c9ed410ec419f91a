// The best sgemm this machine offers, to measure our GEMMs against, side by side in one process:
//  - OpenBLAS as it detects the CPU by itself;
//  - OpenBLAS with the coretype chosen from cpuid for the target (SkylakeX with AVX-512, Haswell with AVX2),
//    a private copy of the library loaded with OPENBLAS_CORETYPE set — never a kernel the CPU lacks;
//  - oneDNN's dnnl_sgemm (runtime ISA dispatch, held to the target by DNNL_MAX_CPU_ISA: runtime/cpu_info.h).
#pragma once
#include <Halide.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace qrnn::bench {

// Row-major C[M][N] = A[M][K] * B[K][N].
using Sgemm = std::function<void(int M, int N, int K, const float *A, const float *B, float *C)>;

struct SgemmReference {
    std::string name;  // e.g. "openblas(auto:Zen)", "openblas(Haswell)", "dnnl_sgemm"
    Sgemm run;
};

// Every reference available for `target` (at least dnnl_sgemm). Loads OpenBLAS with dlopen.
const std::vector<SgemmReference> &sgemm_references(const Halide::Target &target);

// oneDNN's bf16 GEMM with f32 accumulation (dnnl_gemm_bf16bf16f32, its runtime ISA dispatch held to the target like
// dnnl_sgemm's): row-major C[M][N] = A[M][K] * B[K][N], A and B bfloat16 bit patterns. The best bf16 GEMM there is.
void dnnl_bf16_gemm(int M, int N, int K, const uint16_t *A, const uint16_t *B, float *C);

// The OpenBLAS coretype for the target's ISA on this CPU ("SkylakeX", "Haswell", "Sandybridge"), "" if none.
std::string openblas_coretype_for(const Halide::Target &target);

}  // namespace qrnn::bench
