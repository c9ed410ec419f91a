// Bytes the process's malloc has handed out and not taken back: every arena's blocks in use and the mmapped ones
// (a JIT buffer cache's kept blocks count, runtime/buffer_cache.h).
#pragma once
#include <malloc.h>

namespace qrnn::test {
inline double heap_in_use() {
    const struct mallinfo2 info = mallinfo2();
    return static_cast<double>(info.uordblks + info.hblkhd);
}
}  // namespace qrnn::test
