#include "runtime/buffer_cache.h"

#include <cstdlib>
#include <list>
#include <mutex>

namespace qrnn {
namespace {
constexpr size_t kAlign = 64, kHeader = 64, kSlack = 64;  // Halide may read a few bytes out of bounds
constexpr size_t kCacheMin = size_t(4) << 10, kCacheMax = size_t(2) << 30;

struct Block {
    void *base;
    size_t capacity;
};
std::mutex mutex;
std::list<Block> cached;  // most recently freed first
size_t cached_bytes = 0;

size_t &capacity_of(void *ptr) { return *reinterpret_cast<size_t *>(static_cast<char *>(ptr) - kHeader); }
}  // namespace

void *cached_halide_malloc(Halide::JITUserContext *, size_t size) {
    if (size >= kCacheMin) {
        std::lock_guard<std::mutex> lock(mutex);
        for (auto it = cached.begin(); it != cached.end(); ++it)
            if (it->capacity >= size && it->capacity <= size + size / 4) {
                void *base = it->base;
                cached_bytes -= it->capacity;
                cached.erase(it);
                return static_cast<char *>(base) + kHeader;
            }
    }
    size_t total = (kHeader + size + kSlack + kAlign - 1) / kAlign * kAlign;
    void *base = std::aligned_alloc(kAlign, total);
    if (!base) return nullptr;
    void *ptr = static_cast<char *>(base) + kHeader;
    capacity_of(ptr) = size;
    return ptr;
}

void cached_halide_free(Halide::JITUserContext *, void *ptr) {
    if (!ptr) return;
    void *base = static_cast<char *>(ptr) - kHeader;
    size_t capacity = capacity_of(ptr);
    if (capacity >= kCacheMin && capacity <= kCacheMax) {
        std::lock_guard<std::mutex> lock(mutex);
        cached.push_front({base, capacity});
        cached_bytes += capacity;
        while (cached_bytes > kCacheMax) {
            cached_bytes -= cached.back().capacity;
            std::free(cached.back().base);
            cached.pop_back();
        }
        return;
    }
    std::free(base);
}

void use_buffer_cache(Halide::Pipeline &pipeline) {
    pipeline.jit_handlers().custom_malloc = cached_halide_malloc;
    pipeline.jit_handlers().custom_free = cached_halide_free;
}

}  // namespace qrnn
