// Allocator for CPU pipelines (JIT and loaded kernels, runtime/kernel.h) that keeps large freed blocks for reuse: an
// unfused layer allocates its intermediates (e.g. 126 MB of gates at B=64, T=512) on every call, and fresh mmap'd pages
// cost a page fault each (measured: ~45% of such a call on the 2-core VM). Blocks >= 4 KiB are cached (up to 2 GiB):
// from 64 KiB only, the GEMM core's per-task sums (61 KB at B=8 T=64) went back to glibc, which returned its heap's top
// and faulted it in again (~6 faults a call).
// From 1 MiB only, glibc's heap grew by a fresh 0.66 MB block on several early calls (B=8 T=64: ~190 faults each,
// 3.5 ms instead of 2.2; tests/test_buffer_cache.cpp).
#pragma once
#include <Halide.h>

namespace qrnn {
void *cached_halide_malloc(Halide::JITUserContext *, size_t size);
void cached_halide_free(Halide::JITUserContext *, void *ptr);
void use_buffer_cache(Halide::Pipeline &pipeline);  // installs both as the pipeline's JIT handlers
}  // namespace qrnn
