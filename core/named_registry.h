// A registry of named entries (pooling variants, models, ...): add() rejects a taken name, find() names the
// known ones when it fails. Entries never move once added, so references from find() stay valid.
#pragma once
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.h"

namespace qrnn {

template <class T>
class NamedRegistry {
public:
    // kind names the entries in messages: "unknown <kind> 'x' (known: ...)", "<added_kind> 'x' is already registered".
    explicit NamedRegistry(std::string kind, std::string added_kind = "")
        : kind_(std::move(kind)), added_kind_(added_kind.empty() ? kind_ : std::move(added_kind)) {}

    void add(const std::string &name, T entry) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (entries_.count(name)) fail(added_kind_, " '", name, "' is already registered");
        entries_.emplace(name, std::move(entry));
    }
    const T &find(const std::string &name) const {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = entries_.find(name);
        if (it == entries_.end()) {
            std::string known;
            for (auto &kv : entries_) known += (known.empty() ? "" : ", ") + kv.first;
            fail("unknown ", kind_, " '", name, "' (known: ", known, ")");
        }
        return it->second;
    }
    std::vector<std::string> names() const {
        std::lock_guard<std::mutex> lock(mutex_);
        std::vector<std::string> out;
        for (auto &kv : entries_) out.push_back(kv.first);
        return out;
    }

private:
    std::string kind_, added_kind_;
    mutable std::mutex mutex_;
    std::map<std::string, T> entries_;
};

}  // namespace qrnn
