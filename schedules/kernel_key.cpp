#include "schedules/kernel_key.h"

namespace qrnn {
namespace {
thread_local std::string t_build_key;
thread_local int t_build_count = 0;
thread_local bool t_build_cacheable = false;
}  // namespace

KernelBuildScope::KernelBuildScope(std::string key)
    : saved_key_(std::move(t_build_key)), saved_count_(t_build_count), saved_cacheable_(t_build_cacheable) {
    t_build_key = std::move(key);
    t_build_count = 0;
    t_build_cacheable = true;
}

KernelBuildScope::~KernelBuildScope() {
    t_build_key = std::move(saved_key_);
    t_build_count = saved_count_;
    t_build_cacheable = saved_cacheable_;
}

std::string next_kernel_key() {
    if (!t_build_cacheable || t_build_key.empty()) return "";
    return t_build_key + "#" + std::to_string(t_build_count++);
}

void mark_build_uncacheable() { t_build_cacheable = false; }

}  // namespace qrnn
