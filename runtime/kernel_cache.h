// The disk cache of compiled pipelines: a pipeline compiled once is a shared object that later processes load
// (dlopen) instead of compiling it again. Each entry is keyed by everything that changes its code: the component
// and its in-process key (pooling, schedule and knobs, options; runtime/pipeline_cache.h), which of its pipelines,
// the target, the GEMM core's knobs, and the code that defines it (build ids of libqrnn, libHalide and loaded
// plugins). Where: $QRNN_CACHE_DIR, else $XDG_CACHE_HOME/qrnn, else ~/.cache/qrnn; QRNN_CACHE_DIR=off turns it off.
// Entries are written atomically (a temporary name, then rename), so processes share the directory; beyond
// QRNN_CACHE_MAX_MB (default 2048) the least recently used are removed. `qrnn cache` shows and clears it.
// The build ships the kernels of the built-in models at their defaults the same way, in the directory
// qrnn-kernels beside libqrnn (scripts/build_kernels.sh; QRNN_BUILTIN_KERNEL_DIR overrides, =off ignores it);
// lookups try it first and never change it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace qrnn {

struct KernelCacheEntry {
    std::string path;  // the shared object
    std::string key;   // its full key (first field: the component)
    int64_t bytes = 0;
    int64_t used = 0;  // last use, seconds since the epoch
};

std::string kernel_cache_dir();    // "" when the cache is off
std::string builtin_kernel_dir();  // the build's kernels (read-only); "" when off
int64_t kernel_cache_limit_bytes();
std::vector<KernelCacheEntry> kernel_cache_entries(const std::string &dir);  // most recently used first
void clear_kernel_cache(const std::string &dir);                            // removes every entry

// The shared object for key, from the build's kernels or the cache ("" when absent); marks a cached one used.
std::string find_cached_kernel(const std::string &key);
// Links the object file into a shared object stored under key, then trims the cache to its limit; returns the
// stored path. Throws qrnn::Error naming the linker's failure.
std::string store_kernel(const std::string &key, const std::string &object_file);
// A temporary file name in the cache directory for an object about to be stored.
std::string kernel_temp_path(const std::string &suffix);

// The code that defines pipelines: build ids of libqrnn, libHalide and every library passed to note_kernel_code.
std::string kernel_code_identity();
// Adds the library containing `address` (a loaded plugin's entry point) to kernel_code_identity.
void note_kernel_code(const void *address);

}  // namespace qrnn
