// The disk-cache key of the pipelines a build compiles (runtime/kernel_cache.h). The pipeline cache
// (runtime/pipeline_cache.h) opens a scope per build with the build's in-process key; each pipeline compiled in it
// takes the next "<key>#<n>". A schedule that reads state the key does not name opts out.
#pragma once
#include <string>

namespace qrnn {

// While alive, pipelines compiled on this thread are cached under "<key>#<n>", n counting the compiles (so a build
// compiling several pipelines keys each). Nested scopes stack.
class KernelBuildScope {
public:
    explicit KernelBuildScope(std::string key);
    ~KernelBuildScope();
    KernelBuildScope(const KernelBuildScope &) = delete;
    KernelBuildScope &operator=(const KernelBuildScope &) = delete;

private:
    std::string saved_key_;
    int saved_count_;
    bool saved_cacheable_;
};

// The disk key of the next pipeline compiled in this thread's build, "" outside a build or after
// mark_build_uncacheable.
std::string next_kernel_key();
// For a build that reads state its key does not name (e.g. the tuning database): its pipelines are compiled,
// never cached.
void mark_build_uncacheable();

}  // namespace qrnn
