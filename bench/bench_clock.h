// The clock `qrnn bench` times each call with: wall time on all cores (the default), or the calling thread's CPU
// time with everything on that one thread (Halide's thread pool, OpenBLAS, oneDNN's OpenMP), whose ratios stay
// steady on a loaded machine (a preempted call's CPU time does not grow).
#pragma once
#include <string>

namespace qrnn::bench {

enum class Clock { wall, thread_cpu };

Clock parse_clock(const std::string &text);  // "wall" or "thread-cpu"; anything else fails with a one-line error
std::string clock_name(Clock c);
std::string clock_description(Clock c);  // for the output header

// Selects the clock of time_interleaved; thread_cpu first puts every library on one thread. Call before any
// Halide pipeline runs in parallel and before sgemm_references() loads OpenBLAS (both read the thread count once).
void use_clock(Clock c);
Clock current_clock();

// Times one call on the current clock: construct, call, elapsed_ms() (once).
class CallTimer {
public:
    CallTimer();
    double elapsed_ms();

private:
    double start_ = 0, process_start_ = 0;
};

// Under thread_cpu: the CPU time other threads of this process used during timed calls, as a share of the timed
// calls' own thread CPU time (near 0 when everything ran on one thread, as it should); 0 under wall.
double other_threads_cpu_share();

}  // namespace qrnn::bench
