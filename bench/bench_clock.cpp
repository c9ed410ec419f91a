#include "bench/bench_clock.h"

#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <ctime>

#include "core/error.h"

namespace qrnn::bench {
namespace {
Clock g_clock = Clock::wall;
double g_own_ms = 0, g_process_ms = 0;

double cpu_ms(clockid_t id) {
    timespec ts{};
    clock_gettime(id, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}
double wall_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

Clock parse_clock(const std::string &text) {
    if (text == "wall") return Clock::wall;
    if (text == "thread-cpu") return Clock::thread_cpu;
    fail("--clock: unknown clock '", text, "' (wall or thread-cpu)");
}

std::string clock_name(Clock c) { return c == Clock::wall ? "wall" : "thread-cpu"; }

std::string clock_description(Clock c) {
    return c == Clock::wall ? "wall time, all cores"
                            : "thread CPU time, one thread (Halide, OpenBLAS, oneDNN/OpenMP)";
}

void use_clock(Clock c) {
    g_clock = c;
    if (c != Clock::thread_cpu) return;
    // Halide's JIT thread pool and OpenBLAS (loaded later by sgemm_references) read these when they start.
    setenv("HL_NUM_THREADS", "1", 1);
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    setenv("OMP_NUM_THREADS", "1", 1);
    // libgomp (loaded with oneDNN) read OMP_NUM_THREADS before main: set the calling thread's count directly.
    using SetThreads = void (*)(int);
    if (auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"))) set(1);
}

Clock current_clock() { return g_clock; }

CallTimer::CallTimer() {
    if (g_clock == Clock::wall) start_ = wall_ms();
    else process_start_ = cpu_ms(CLOCK_PROCESS_CPUTIME_ID), start_ = cpu_ms(CLOCK_THREAD_CPUTIME_ID);
}

double CallTimer::elapsed_ms() {
    if (g_clock == Clock::wall) return wall_ms() - start_;
    const double own = cpu_ms(CLOCK_THREAD_CPUTIME_ID) - start_;
    g_own_ms += own, g_process_ms += cpu_ms(CLOCK_PROCESS_CPUTIME_ID) - process_start_;
    return own;
}

double other_threads_cpu_share() { return g_own_ms > 0 ? (g_process_ms - g_own_ms) / g_own_ms : 0; }

}  // namespace qrnn::bench
