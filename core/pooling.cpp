#include "core/pooling.h"

#include "core/named_registry.h"

namespace qrnn {
namespace {
NamedRegistry<PoolingVariant> &pooling_variants() {
    static NamedRegistry<PoolingVariant> variants("pooling", "pooling variant");
    return variants;
}
}  // namespace

int PoolingVariant::gate_index(char letter) const {
    auto pos = gates.find(letter);
    return pos == std::string::npos ? -1 : static_cast<int>(pos);
}

void PoolingVariant::require_backward() const {
    if (!has_backward())
        fail("pooling variant '", name, "' has no backward pass: it cannot be trained (give it halide_partials and "
             "reference_partials, docs/plugins.md)");
}

PoolingPartials<Halide::Expr> complete_partials(const PoolingVariant &variant, const std::vector<Halide::Expr> &gates,
                                                const Halide::Expr &c) {
    variant.require_backward();
    PoolingPartials<Halide::Expr> p = variant.halide_partials(gates, c);
    auto fill = [](Halide::Expr &e) {
        if (!e.defined()) e = Halide::Expr(0.0f);
    };
    for (int i = 0; i < 4; i++) fill(p.da[i]), fill(p.db[i]), fill(p.dout[i]);
    fill(p.dout_dc);
    return p;
}

void register_pooling(PoolingVariant v) {
    if (v.name.empty()) fail("pooling variant with an empty name");
    if (v.gates.rfind("zf", 0) != 0 || v.gates.size() > 4 || v.gates.find_first_not_of("zfoi") != std::string::npos)
        fail("pooling variant '", v.name, "': gates '", v.gates, "' must start with \"zf\" and use letters of \"zfoi\"");
    if (!v.halide_recurrence || !v.halide_output || !v.reference_recurrence || !v.reference_output)
        fail("pooling variant '", v.name, "' lacks a Halide or reference definition");
    if (!v.halide_partials != !v.reference_partials)
        fail("pooling variant '", v.name, "' has a backward in ", v.halide_partials ? "Halide" : "double",
             " only: give both halide_partials and reference_partials, or neither");
    std::string name = v.name;
    pooling_variants().add(name, std::move(v));
}

const PoolingVariant &find_pooling(const std::string &name) { return pooling_variants().find(name); }
std::vector<std::string> pooling_names() { return pooling_variants().names(); }
std::vector<const PoolingVariant *> all_poolings() {
    std::vector<const PoolingVariant *> all;
    for (auto &name : pooling_names()) all.push_back(&pooling_variants().find(name));
    return all;
}

}  // namespace qrnn
