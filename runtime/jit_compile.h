// JIT compilation of a component's pipelines (e.g. a layer's forward and backward), each with the CPU JIT handlers
// installed (use_cpu_jit_handlers), compiled side by side on up to as many threads as the machine has cores:
// compilation is most of a short run's time (tests, start-up), and the Halide compiler is thread-safe for
// separate pipelines. The first compile error is rethrown.
#pragma once
#include <Halide.h>

#include <vector>

namespace qrnn {
// The handlers every CPU pipeline runs with: the buffer cache (runtime/buffer_cache.h) and the static thread pool
// (runtime/static_thread_pool.h).
void use_cpu_jit_handlers(Halide::Pipeline &pipeline);
void compile_jit_pipelines(const std::vector<Halide::Pipeline *> &pipelines, const Halide::Target &target);
}  // namespace qrnn
