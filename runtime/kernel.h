// A compiled Halide pipeline, run on the buffers bound to its ImageParams and Params. On a CPU target inside a
// cacheable build (runtime/kernel_cache.h) it is a shared object from the disk cache, compiled to an object and
// linked on a miss; otherwise (GPU targets, builds outside the pipeline cache, QRNN_CACHE_DIR=off, no linker)
// it is JIT-compiled as before. Either way it runs with the project's allocator (runtime/buffer_cache.h) and
// thread pool (runtime/static_thread_pool.h), and an error inside it is a Halide::RuntimeError.
#pragma once
#include <Halide.h>

#include <memory>
#include <string>
#include <vector>

namespace qrnn {

class Kernel {
public:
    Kernel() = default;
    Kernel(Halide::Pipeline pipeline) : pipeline_(std::move(pipeline)) {}  // NOLINT: a pipeline becomes a kernel

    // Compiles (or loads) for target under disk key `key` ("" = JIT, not cached).
    void compile(const Halide::Target &target, const std::string &key);
    void realize(Halide::Realization outputs);
    template <class T>
    void realize(const Halide::Buffer<T> &output) {
        std::vector<Halide::Buffer<>> outputs{output};
        realize(Halide::Realization(outputs));
    }
    bool from_disk_cache() const { return loaded_ != nullptr; }

private:
    struct Loaded;
    Halide::Pipeline pipeline_;
    std::shared_ptr<Loaded> loaded_;               // the shared object, when not JIT-compiled
    std::vector<Halide::Internal::Parameter> params_;  // its arguments before the outputs, in order
};

// Compiles a component's kernels side by side on up to as many threads as the machine has cores (compilation is
// most of a short run's time; Halide compiles separate pipelines thread-safely), each under the next disk key of
// this thread's build (next_kernel_key). The first error is rethrown.
void compile_kernels(const std::vector<Kernel *> &kernels, const Halide::Target &target);

}  // namespace qrnn
