// What this CPU is and what a Halide target may use of it: the facts schedules derive their defaults from
// (vector width, vector registers, cache sizes, cores) and that results name next to every figure.
#pragma once
#include <Halide.h>

#include <string>

namespace qrnn {

struct CpuInfo {
    std::string model;  // /proc/cpuinfo model name, e.g. "AMD EPYC"
    std::string id;     // vendor family/model/stepping, e.g. "AuthenticAMD 26/2/1" (VMs often hide the name)
    std::string isa;    // widest vector ISA the CPU has: "avx512", "avx2", "avx", "sse4.1", "sse2"
    int64_t l1d_bytes = 32 << 10, l2_bytes = 512 << 10, l3_bytes = 8 << 20;  // sysconf, else these
    int cores = 1;
    std::string describe() const;  // "AMD EPYC (AuthenticAMD 26/2/1, avx512, 2 cores, L1d 48K, L2 1024K)"
};
const CpuInfo &cpu_info();

// What a CPU schedule may assume when compiled for `target` on this machine.
struct CpuTraits {
    int vector_floats = 4;     // natural vector size of float
    int vector_registers = 16;  // 32 with AVX-512, else 16
    int64_t l1d_bytes = 0, l2_bytes = 0;
    int cores = 1;
};
CpuTraits cpu_traits(const Halide::Target &target);

// The widest vector ISA a Halide target uses ("avx512", "avx2", "avx", "sse4.1", "sse2"), as CpuInfo::isa.
std::string target_isa(const Halide::Target &target);
// True if this CPU can run code for `target` (its ISA is not wider than the CPU's).
bool cpu_runs(const Halide::Target &target);
// The Halide targets this CPU can run, narrowest first, for tests and benchmarks of every ISA path:
// x86-64-linux-sse41, x86-64-linux-avx-avx2-fma-f16c, and the host target when it is wider.
std::vector<Halide::Target> runnable_cpu_targets();

// Holds oneDNN (a reference and the LSTM baseline) to the ISA of `target`: below AVX-512, DNNL_MAX_CPU_ISA=AVX2
// (AVX, SSE41) unless already set. Call before the first oneDNN call.
void hold_references_to(const Halide::Target &target);

}  // namespace qrnn
