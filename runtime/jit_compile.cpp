#include "runtime/jit_compile.h"

#include <algorithm>
#include <future>
#include <thread>

#include "runtime/buffer_cache.h"
#include "runtime/static_thread_pool.h"

namespace qrnn {
void use_cpu_jit_handlers(Halide::Pipeline &pipeline) {
    use_buffer_cache(pipeline);
    use_static_thread_pool(pipeline);
}

void compile_jit_pipelines(const std::vector<Halide::Pipeline *> &pipelines, const Halide::Target &target) {
    for (Halide::Pipeline *p : pipelines) use_cpu_jit_handlers(*p);
    const size_t threads = std::max<size_t>(1, std::min<size_t>(pipelines.size(), std::thread::hardware_concurrency()));
    // Pipeline i compiles on worker i % threads; worker 0 is this thread.
    auto worker = [&](size_t first) {
        for (size_t i = first; i < pipelines.size(); i += threads) pipelines[i]->compile_jit(target);
    };
    std::vector<std::future<void>> others;
    for (size_t w = 1; w < threads; w++) others.push_back(std::async(std::launch::async, worker, w));
    std::exception_ptr error;
    try {
        worker(0);
    } catch (...) {
        error = std::current_exception();
    }
    for (auto &f : others) try {
            f.get();
        } catch (...) {
            if (!error) error = std::current_exception();
        }
    if (error) std::rethrow_exception(error);
}

}  // namespace qrnn
