// The parallel-for of every CPU pipeline (JIT: use_cpu_jit_handlers, runtime/jit_compile.h; loaded kernels:
// runtime/kernel.h). Each loop's iterations are split into one contiguous range per thread, thread k always taking
// range k (so a core meets again the rows or sequences it wrote in the loop before), threads done early steal from the
// other ranges, and idle workers spin 0.3 ms before sleeping (pausing the core for the first 5 us, then yielding it:
// QRNN_POOL_PAUSE_US). Halide's pool hands iterations out one by one to whichever thread asks, which on the 2-core VM
// moved data between cores from loop to loop, and its workers sleep after a few microseconds. At T=37 S=53 B=5 m=203
// the attention took ~0.75x the time with this pool, forward and backward (AMD EPYC, 2 cores, back to back); the
// layer's GEMMs and scans: docs/schedules.md, "One thread pool".
// A loop started inside a task (nested parallel loops) is published; threads done with their own ranges, and a
// task's caller waiting for its helpers, join it, taking its iterations one at a time (without that wait-time help
// dW, 3 (g) x 2 (j) tasks each running a loop over h groups, took 1.1-1.3x the time). Threads: HL_NUM_THREADS, else
// the machine's cores. A loop started while another thread's loop runs runs serially, on its caller.
#pragma once
#include <Halide.h>

namespace qrnn {
int static_do_par_for(Halide::JITUserContext *context, int (*task)(Halide::JITUserContext *, int, uint8_t *), int min,
                      int size, uint8_t *closure);
int static_thread_pool_threads();  // the threads its loops run on (1: serially)
// Installs static_do_par_for as the pipeline's JIT handler, unless QRNN_THREAD_POOL=halide (Halide's own pool, for
// A/B comparisons; any value other than static or halide is an error), after checking QRNN_POOL_PAUSE_US.
void use_static_thread_pool(Halide::Pipeline &pipeline);
// The same handler for ahead-of-time compiled code (halide_set_custom_do_par_for); null for QRNN_THREAD_POOL=halide.
halide_do_par_for_t static_thread_pool_handler();
}  // namespace qrnn
