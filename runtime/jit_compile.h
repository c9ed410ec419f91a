// The handlers every CPU pipeline JIT-compiled by libHalide runs with: the buffer cache (runtime/buffer_cache.h)
// and the static thread pool (runtime/static_thread_pool.h). Kernels loaded from the disk cache get the same
// (runtime/kernel.h).
#pragma once
#include <Halide.h>

namespace qrnn {
void use_cpu_jit_handlers(Halide::Pipeline &pipeline);
}  // namespace qrnn
