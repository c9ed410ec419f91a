#include "runtime/jit_compile.h"

#include "runtime/buffer_cache.h"
#include "runtime/static_thread_pool.h"

namespace qrnn {
void use_cpu_jit_handlers(Halide::Pipeline &pipeline) {
    use_buffer_cache(pipeline);
    use_static_thread_pool(pipeline);
}
}  // namespace qrnn
