// JIT compilation of a component's pipelines (e.g. a layer's forward and backward), each with the buffer cache
// (runtime/buffer_cache.h) installed, compiled side by side on up to as many threads as the machine has cores:
// compilation is most of a short run's time (tests, start-up), and the Halide compiler is thread-safe for
// separate pipelines. The first compile error is rethrown.
#pragma once
#include <Halide.h>

#include <vector>

namespace qrnn {
void compile_jit_pipelines(const std::vector<Halide::Pipeline *> &pipelines, const Halide::Target &target);

// A call context (Pipeline::realize(&context, ..)) whose parallel loops run their tasks in order on the calling
// thread; the pipeline's other handlers (the buffer cache) stay. For calls too small to repay a fork/join per
// parallel loop on a second core; `serial` false: the default context (the Halide thread pool).
Halide::JITUserContext jit_context(bool serial);
}  // namespace qrnn
