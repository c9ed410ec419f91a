#include "runtime/pipeline_cache.h"

#include <cxxabi.h>

#include <cstdlib>

namespace qrnn {

std::shared_ptr<PipelineCache::Slot> PipelineCache::slot_for(const SlotKey &key) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::shared_ptr<Slot> &slot = slots_[key];
    if (!slot) slot = std::make_shared<Slot>();
    return slot;
}

void PipelineCache::record_built(const SlotKey &key) {
    std::lock_guard<std::mutex> lock(mutex_);
    built_.insert(type_name(key.first) + "|" + key.second);
}

std::vector<std::string> PipelineCache::keys() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return {built_.begin(), built_.end()};
}

std::string PipelineCache::type_name(std::type_index type) {
    int status = 0;
    char *demangled = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
    std::string name = status == 0 && demangled ? demangled : type.name();
    std::free(demangled);
    return name.rfind("qrnn::", 0) == 0 ? name.substr(6) : name;
}

PipelineCache &pipeline_cache() {
    static PipelineCache cache;
    return cache;
}

}  // namespace qrnn
