#include "core/pooling.h"

#include <map>
#include <mutex>

#include "core/error.h"

namespace qrnn {
namespace {
std::map<std::string, PoolingVariant> &registry() {
    static std::map<std::string, PoolingVariant> variants;
    return variants;
}
std::mutex &registry_mutex() {
    static std::mutex m;
    return m;
}
}  // namespace

int PoolingVariant::gate_index(char letter) const {
    auto pos = gates.find(letter);
    return pos == std::string::npos ? -1 : static_cast<int>(pos);
}

void register_pooling(PoolingVariant v) {
    if (v.name.empty()) fail("pooling variant with an empty name");
    if (v.gates.rfind("zf", 0) != 0 || v.gates.size() > 4 || v.gates.find_first_not_of("zfoi") != std::string::npos)
        fail("pooling variant '", v.name, "': gates '", v.gates, "' must start with \"zf\" and use letters of \"zfoi\"");
    if (!v.halide_recurrence || !v.halide_output || !v.reference_recurrence || !v.reference_output)
        fail("pooling variant '", v.name, "' lacks a Halide or reference definition");
    std::lock_guard<std::mutex> lock(registry_mutex());
    if (registry().count(v.name)) fail("pooling variant '", v.name, "' is already registered");
    std::string name = v.name;
    registry().emplace(name, std::move(v));
}

const PoolingVariant &find_pooling(const std::string &name) {
    std::lock_guard<std::mutex> lock(registry_mutex());
    auto it = registry().find(name);
    if (it == registry().end()) {
        std::string known;
        for (auto &kv : registry()) known += (known.empty() ? "" : ", ") + kv.first;
        fail("unknown pooling '", name, "' (known: ", known, ")");
    }
    return it->second;
}

std::vector<std::string> pooling_names() {
    std::lock_guard<std::mutex> lock(registry_mutex());
    std::vector<std::string> names;
    for (auto &kv : registry()) names.push_back(kv.first);
    return names;
}

}  // namespace qrnn
