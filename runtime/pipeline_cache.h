// The one cache of JIT-compiled pipelines in the process. Every component that compiles Halide pipelines (a
// layer's forward, its training pair, the variable-length layer, attention, conditioning, the LM decoder, the
// baselines' steps) keeps them here, keyed by its type and by everything that changes their code (pooling,
// schedule and knobs, target, options; the shape for per-shape schedules). Each key is built once, on first
// use, and shared for the life of the process; builds of different keys may run side by side. The same key names
// the build's kernels in the disk cache (runtime/kernel_cache.h), so it must name everything their code depends on.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <typeindex>
#include <typeinfo>
#include <utility>
#include <vector>

#include "schedules/kernel_key.h"

namespace qrnn {

class PipelineCache {
public:
    // The Compiled under `key`, built by `build()` (returning std::shared_ptr<Compiled>) if absent. A build that
    // throws leaves the key absent.
    template <class Compiled, class Build>
    std::shared_ptr<Compiled> get(const std::string &key, Build &&build) {
        const SlotKey full_key{std::type_index(typeid(Compiled)), key};
        const std::shared_ptr<Slot> slot = slot_for(full_key);
        std::lock_guard<std::mutex> lock(slot->mutex);
        if (!slot->value) {
            KernelBuildScope disk_keys(type_name(full_key.first) + "|" + key);
            slot->value = std::shared_ptr<Compiled>(build());
            record_built(full_key);
        }
        return std::static_pointer_cast<Compiled>(slot->value);
    }
    std::vector<std::string> keys() const;  // of what has been built: "<type>|<key>", sorted
    static std::string type_name(std::type_index type);  // demangled, without "qrnn::"

private:
    struct Slot {
        std::mutex mutex;
        std::shared_ptr<void> value;
    };
    // By type_index, not the type's name: types in anonymous namespaces of different files share names.
    using SlotKey = std::pair<std::type_index, std::string>;
    std::shared_ptr<Slot> slot_for(const SlotKey &key);
    void record_built(const SlotKey &key);
    mutable std::mutex mutex_;
    std::map<SlotKey, std::shared_ptr<Slot>> slots_;
    std::set<std::string> built_;
};

PipelineCache &pipeline_cache();

}  // namespace qrnn
