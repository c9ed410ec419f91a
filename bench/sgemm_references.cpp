#include "bench/sgemm_references.h"

#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "schedules/cpu_target.h"

namespace qrnn::bench {
namespace {
const char *kOpenBlas = "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0";

using CblasSgemm = void (*)(int, int, int, int, int, int, float, const float *, int, const float *, int, float, float *, int);
using CoreName = char *(*)();
constexpr int kRowMajor = 101, kNoTrans = 111;

// Sets (or, with nullptr, unsets) an environment variable for its lifetime, then restores what was there.
class ScopedEnv {
public:
    ScopedEnv(const char *name, const char *value) : name_(name) {
        const char *old = std::getenv(name);
        had_ = old != nullptr;
        if (had_) saved_ = old;
        if (value) setenv(name, value, 1);
        else unsetenv(name);
    }
    ~ScopedEnv() {
        if (had_) setenv(name_, saved_.c_str(), 1);
        else unsetenv(name_);
    }

private:
    const char *name_;
    bool had_ = false;
    std::string saved_;
};

// Loads a private copy of OpenBLAS (its CPU detection and settings are read from the environment when it loads).
// Its pthread workers spin-wait 2^28 cycles (~0.1 s) after each call by default, taking a core from whatever
// `qrnn bench` times next (ours, interleaved call by call): OPENBLAS_THREAD_TIMEOUT=4 (2^4 cycles) unless the
// user set one.
bool load_openblas(const std::string &coretype, std::vector<SgemmReference> &out) {
    if (!std::filesystem::exists(kOpenBlas)) return false;
    std::string copy = std::filesystem::temp_directory_path() / ("qrnn-openblas-" + std::to_string(getpid()) + "-" +
                                                                 (coretype.empty() ? "auto" : coretype) + ".so");
    std::filesystem::copy_file(kOpenBlas, copy, std::filesystem::copy_options::overwrite_existing);
    void *lib = nullptr;
    {
        ScopedEnv core("OPENBLAS_CORETYPE", coretype.empty() ? nullptr : coretype.c_str());
        const char *user_timeout = std::getenv("OPENBLAS_THREAD_TIMEOUT");
        const std::string timeout = user_timeout ? user_timeout : "4";
        ScopedEnv spin("OPENBLAS_THREAD_TIMEOUT", timeout.c_str());
        lib = dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
    }
    std::filesystem::remove(copy);  // the mapping stays valid
    if (!lib) return false;
    auto sgemm = reinterpret_cast<CblasSgemm>(dlsym(lib, "cblas_sgemm"));
    auto corename = reinterpret_cast<CoreName>(dlsym(lib, "openblas_get_corename"));
    if (!sgemm) return false;
    std::string detected = corename ? corename() : "?";
    out.push_back({"openblas(" + (coretype.empty() ? "auto:" + detected : detected) + ")",
                   [sgemm](int M, int N, int K, const float *A, const float *B, float *C) {
                       sgemm(kRowMajor, kNoTrans, kNoTrans, M, N, K, 1.0f, A, K, B, N, 0.0f, C, N);
                   }});
    return true;
}
}  // namespace

std::string openblas_coretype_for(const Halide::Target &target) {
    const std::string isa = target_isa(target);
    if (!cpu_runs(target)) return "";
    if (isa == "avx512") return "SkylakeX";
    if (isa == "avx2") return "Haswell";
    if (isa == "avx") return "Sandybridge";
    return "";
}

const std::vector<SgemmReference> &sgemm_references(const Halide::Target &target) {
    static std::vector<SgemmReference> refs;
    static std::string loaded_for;
    const std::string key = target.to_string();
    if (!refs.empty()) {
        if (loaded_for != key) fail("sgemm references were loaded for ", loaded_for, ", not ", key);
        return refs;
    }
    loaded_for = key;
    hold_references_to(target);
    // OpenBLAS's own detection may pick a wider ISA than the target's: only when the target is the CPU's widest.
    if (target_isa(target) == cpu_info().isa) load_openblas("", refs);
    std::string coretype = openblas_coretype_for(target);
    if (!coretype.empty()) load_openblas(coretype, refs);
    refs.push_back({"dnnl_sgemm", [](int M, int N, int K, const float *A, const float *B, float *C) {
                        if (dnnl_sgemm('N', 'N', M, N, K, 1.0f, A, K, B, N, 0.0f, C, N) != dnnl_success)
                            fail("dnnl_sgemm failed (M=", M, " N=", N, " K=", K, ")");
                    }});
    return refs;
}

// Exported by libdnnl 2.6 but not declared in Debian's headers; oneDNN's documented signature.
extern "C" dnnl_status_t dnnl_gemm_bf16bf16f32(char transa, char transb, dnnl_dim_t M, dnnl_dim_t N, dnnl_dim_t K,
                                              float alpha, const uint16_t *A, dnnl_dim_t lda, const uint16_t *B,
                                              dnnl_dim_t ldb, float beta, float *C, dnnl_dim_t ldc);

void dnnl_bf16_gemm(int M, int N, int K, const uint16_t *A, const uint16_t *B, float *C) {
    if (dnnl_gemm_bf16bf16f32('N', 'N', M, N, K, 1.0f, A, K, B, N, 0.0f, C, N) != dnnl_success)
        fail("dnnl_gemm_bf16bf16f32 failed (M=", M, " N=", N, " K=", K, ")");
}

}  // namespace qrnn::bench
