#include "schedules/cpu_target.h"

#include <cpuid.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <thread>

namespace qrnn {
using Halide::Target;

namespace {
std::string proc_cpuinfo_field(const std::string &field) {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(field, 0) == 0) {
            auto colon = line.find(':');
            if (colon == std::string::npos) continue;
            auto start = line.find_first_not_of(' ', colon + 1);
            return start == std::string::npos ? "" : line.substr(start);
        }
    return "";
}

std::string widest_cpu_isa() {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
        return "avx512";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "avx2";
    if (__builtin_cpu_supports("avx")) return "avx";
    if (__builtin_cpu_supports("sse4.1")) return "sse4.1";
    return "sse2";
}

int isa_rank(const std::string &isa) {
    const char *order[] = {"sse2", "sse4.1", "avx", "avx2", "avx512"};
    for (int i = 0; i < 5; i++)
        if (isa == order[i]) return i;
    return 0;
}

int64_t sysconf_or(int name, int64_t fallback) {
    long v = sysconf(name);
    return v > 0 ? v : fallback;
}
}  // namespace

std::string CpuInfo::describe() const {
    return model + " (" + id + ", " + isa + ", " + std::to_string(cores) + " cores, L1d " + std::to_string(l1d_bytes >> 10) +
           "K, L2 " + std::to_string(l2_bytes >> 10) + "K)";
}

const CpuInfo &cpu_info() {
    static const CpuInfo info = [] {
        CpuInfo c;
        c.model = proc_cpuinfo_field("model name");
        if (c.model.empty()) c.model = "unknown";
        c.id = proc_cpuinfo_field("vendor_id") + " " + proc_cpuinfo_field("cpu family") + "/" + proc_cpuinfo_field("model") +
               "/" + proc_cpuinfo_field("stepping");
        c.isa = widest_cpu_isa();
        c.l1d_bytes = sysconf_or(_SC_LEVEL1_DCACHE_SIZE, c.l1d_bytes);
        c.l2_bytes = sysconf_or(_SC_LEVEL2_CACHE_SIZE, c.l2_bytes);
        c.l3_bytes = sysconf_or(_SC_LEVEL3_CACHE_SIZE, c.l3_bytes);
        c.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        return c;
    }();
    return info;
}

std::string target_isa(const Target &t) {
    if (t.arch != Target::X86) return "other";
    if (t.has_feature(Target::AVX512)) return "avx512";
    if (t.has_feature(Target::AVX2) && t.has_feature(Target::FMA)) return "avx2";
    if (t.has_feature(Target::AVX)) return "avx";
    if (t.has_feature(Target::SSE41)) return "sse4.1";
    return "sse2";
}

bool cpu_runs(const Target &t) { return t.arch != Target::X86 || isa_rank(target_isa(t)) <= isa_rank(cpu_info().isa); }

CpuTraits cpu_traits(const Target &target) {
    CpuTraits t;
    t.vector_floats = target.natural_vector_size<float>();
    t.vector_registers = target.has_feature(Target::AVX512) ? 32 : 16;
    t.l1d_bytes = cpu_info().l1d_bytes;
    t.l2_bytes = cpu_info().l2_bytes;
    t.cores = cpu_info().cores;
    return t;
}

std::vector<Target> runnable_cpu_targets() {
    std::vector<Target> out;
    for (const char *name : {"x86-64-linux-sse41", "x86-64-linux-avx-avx2-fma-f16c"}) {
        Target t(name);
        if (cpu_runs(t)) out.push_back(t);
    }
    Target host = Halide::get_host_target();
    if (host.arch == Target::X86 && isa_rank(target_isa(host)) > isa_rank("avx2")) out.push_back(host);
    return out;
}

void hold_references_to(const Target &target) {
    const std::string isa = target_isa(target);
    const char *dnnl = isa == "avx2" ? "AVX2" : isa == "avx" ? "AVX" : isa == "sse4.1" || isa == "sse2" ? "SSE41" : nullptr;
    if (dnnl) setenv("DNNL_MAX_CPU_ISA", dnnl, 0);
}

}  // namespace qrnn
