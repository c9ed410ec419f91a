#include "core/pooling.h"

#include "core/named_registry.h"

namespace qrnn {
namespace {
NamedRegistry<PoolingVariant> &registry() {
    static NamedRegistry<PoolingVariant> variants("pooling", "pooling variant");
    return variants;
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
    std::string name = v.name;
    registry().add(name, std::move(v));
}

const PoolingVariant &find_pooling(const std::string &name) { return registry().find(name); }
std::vector<std::string> pooling_names() { return registry().names(); }

}  // namespace qrnn
