#include "runtime/pipeline_cache.h"

namespace qrnn {

std::shared_ptr<PipelineCache::Slot> PipelineCache::slot_for(const SlotKey &key) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::shared_ptr<Slot> &slot = slots_[key];
    if (!slot) slot = std::make_shared<Slot>();
    return slot;
}

void PipelineCache::record_built(const SlotKey &key) {
    std::lock_guard<std::mutex> lock(mutex_);
    built_.insert(std::string(key.first.name()) + "|" + key.second);
}

std::vector<std::string> PipelineCache::keys() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return {built_.begin(), built_.end()};
}

PipelineCache &pipeline_cache() {
    static PipelineCache cache;
    return cache;
}

}  // namespace qrnn
