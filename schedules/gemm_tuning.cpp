#include "schedules/gemm_tuning.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>

#include "core/error.h"
#include "schedules/cpu_target.h"
#include "schedules/tuning_db.h"

namespace qrnn {
using namespace Halide;

namespace {
struct TileKnobs {
    const char *height, *width;
    GemmTile GemmCoreKnobs::*tile;
};
const TileKnobs kTiles[] = {{"tile_h_vectors", "tile_t", &GemmCoreKnobs::conv},
                            {"dw_h_vectors", "tile_c", &GemmCoreKnobs::dweights},
                            {"dx_c_vectors", "dx_tile_t", &GemmCoreKnobs::dinput}};
struct ByteKnob {
    const char *name;
    int64_t GemmCoreKnobs::*bytes;
    int64_t min_kib, max_kib;
};
const ByteKnob kBytes[] = {{"block_kib", &GemmCoreKnobs::block_bytes, 64, 1 << 16},
                           {"panel_kib", &GemmCoreKnobs::panel_bytes, 16, 1 << 14}};

std::string tile_text(GemmTile t) { return std::to_string(t.h_vectors) + "x" + std::to_string(t.t); }
}  // namespace

Knobs GemmCoreKnobs::knobs() const {
    Knobs k;
    for (const TileKnobs &t : kTiles) k[t.height] = (this->*t.tile).h_vectors, k[t.width] = (this->*t.tile).t;
    for (const ByteKnob &b : kBytes) k[b.name] = static_cast<int>(this->*b.bytes / 1024);
    return k;
}

bool GemmCoreKnobs::operator==(const GemmCoreKnobs &o) const { return knobs() == o.knobs(); }

std::string GemmCoreKnobs::describe() const {
    return "conv " + tile_text(conv) + ", dW " + tile_text(dweights) + ", dX " + tile_text(dinput) + ", blocks " +
           std::to_string(block_bytes / 1024) + "K / " + std::to_string(panel_bytes / 1024) + "K (" + source + ")";
}

GemmCoreKnobs default_gemm_core_knobs(const Target &target) {
    const CpuTraits cpu = cpu_traits(target);
    const bool wide = cpu.vector_registers >= 32;
    GemmCoreKnobs k;
    // conv: 4 x 6 with 32 registers (24 accumulators, 4 loads and a broadcast: 29 registers), 10 loads per 24 FMAs
    // where 2 x 8 issues 10 per 16 (the layer forward 1.05-1.10x as fast at 320-2500 units with AVX-512).
    k.conv = wide ? GemmTile{4, 6} : gemm_tile_for(target);
    // dW: 4 vectors of h x 4 c (taller or wider tiles lose at the 320-unit corners: docs/schedules.md), else 2 x 6.
    k.dweights = wide ? GemmTile{4, 4} : GemmTile{2, 6};
    // dX: tall in c so that a step's broadcasts of dpre are few beside its FMAs: 5 x 5 (31 registers), else 3 x 4
    // (16 registers; 4 x 3 spills).
    k.dinput = wide ? GemmTile{5, 5} : GemmTile{3, 4};
    // The column block's operand in about twice L2: it streams from L2/L3 once per panel (sequential rows, the
    // prefetchers keep up), and the panels (MR x K, in L2) are re-read once per block. A panel's K block in half
    // of L2, beside the column tile's rows and the block's sums.
    k.block_bytes = 2 * cpu.l2_bytes;
    k.panel_bytes = cpu.l2_bytes / 2;
    return k;
}

GemmCoreKnobs gemm_core_knobs_from(const Knobs &knobs, const Target &target) {
    auto value = [&](const std::string &name) {
        auto it = knobs.find(name);
        if (it == knobs.end()) fail("gemm-core knobs: '", name, "' is missing");
        return it->second;
    };
    const std::map<std::string, KnobSpec> specs = [] {
        auto s = conv_tile_knob_specs();
        s.merge(backward_tile_knob_specs());
        return s;
    }();
    const int registers = cpu_traits(target).vector_registers;
    GemmCoreKnobs k;
    for (const TileKnobs &t : kTiles) {
        for (const char *name : {t.height, t.width}) {
            const KnobSpec &spec = specs.at(name);
            if (value(name) < spec.min || value(name) > spec.max)
                fail("gemm-core knob '", name, "' = ", value(name), " is outside [", spec.min, ", ", spec.max, "]");
        }
        const GemmTile tile{value(t.height), value(t.width)};
        if (tile.h_vectors * tile.t + tile.h_vectors + 1 > registers)
            fail("gemm-core tile ", t.height, " x ", t.width, " = ", tile_text(tile), " needs more than the ", registers,
                 " vector registers of ", target.to_string());
        k.*t.tile = tile;
    }
    for (const ByteKnob &b : kBytes) {
        if (value(b.name) < b.min_kib || value(b.name) > b.max_kib)
            fail("gemm-core knob '", b.name, "' = ", value(b.name), " is outside [", b.min_kib, ", ", b.max_kib, "]");
        k.*b.bytes = int64_t{value(b.name)} * 1024;
    }
    return k;
}

std::optional<TuningRecord> best_gemm_core_record(const std::vector<TuningRecord> &records, const std::string &target,
                                                  const std::string &cpu) {
    auto ours = [&](const TuningRecord &r) { return r.schedule == kGemmCoreSchedule && r.target == target && r.cpu == cpu; };
    const TuningRecord *newest = nullptr;
    for (const TuningRecord &r : records)
        if (ours(r)) newest = &r;
    if (!newest) return std::nullopt;
    // Per knobs: the newest verified record at that shape, its score the mean of all of them.
    std::vector<std::pair<TuningRecord, int>> groups;
    for (const TuningRecord &r : records) {
        if (!ours(r) || r.status != "ok" || r.shape.key() != newest->shape.key()) continue;
        auto it = std::find_if(groups.begin(), groups.end(), [&](auto &g) { return g.first.knobs == r.knobs; });
        if (it == groups.end()) {
            groups.push_back({r, 1});
        } else {
            const double sum = it->first.score * it->second + r.score;
            it->first = r, it->second++;
            it->first.score = sum / it->second;
        }
    }
    std::optional<TuningRecord> best;
    for (auto &[r, count] : groups)
        if (!best || r.score > best->score) best = r;
    // The defaults unless beaten by more than the timing noise.
    Knobs defaults;
    try {
        defaults = default_gemm_core_knobs(Target(target)).knobs();
    } catch (const std::exception &) {
        return best;
    }
    for (auto &[r, count] : groups)
        if (r.knobs == defaults && best && best->score < r.score * kGemmCoreMargin) best = r;
    return best;
}

namespace {
std::mutex knobs_mutex;
std::map<std::string, GemmCoreKnobs> &trial_knobs() {
    static std::map<std::string, GemmCoreKnobs> knobs;
    return knobs;
}

// The tuned knobs of the database for `target`, or the defaults; a record the target cannot use is skipped with a
// warning.
GemmCoreKnobs tuned_or_default(const Target &target) {
    const char *mode = std::getenv("QRNN_GEMM_TUNING");
    if (mode && std::string(mode) == "defaults") return default_gemm_core_knobs(target);
    const std::string db = default_tuning_db_path();
    std::vector<TuningRecord> records;
    try {
        records = read_tuning_records(db, kGemmCoreSchedule);
    } catch (const Error &e) {
        std::cerr << "warning: GEMM core tuning not read (" << e.what() << "); using the defaults\n";
        return default_gemm_core_knobs(target);
    }
    std::optional<TuningRecord> best = best_gemm_core_record(records, tuning_target_name(target), tuning_cpu_name());
    if (!best) return default_gemm_core_knobs(target);
    try {
        GemmCoreKnobs k = gemm_core_knobs_from(best->knobs, target);
        k.source = "tuned: " + db + " line " + std::to_string(best->line);
        return k;
    } catch (const Error &e) {
        std::cerr << "warning: tuning database " << db << " line " << best->line << " skipped: " << e.what() << "\n";
        return default_gemm_core_knobs(target);
    }
}
}  // namespace

GemmCoreKnobs gemm_core_knobs(const Target &target) {
    const std::string key = tuning_target_name(target);
    std::lock_guard<std::mutex> lock(knobs_mutex);
    auto trial = trial_knobs().find(key);
    if (trial != trial_knobs().end()) return trial->second;
    static std::map<std::string, GemmCoreKnobs> loaded;
    auto it = loaded.find(key);
    if (it == loaded.end()) it = loaded.emplace(key, tuned_or_default(target)).first;
    return it->second;
}

GemmCoreTrial::GemmCoreTrial(const Target &target, const GemmCoreKnobs &knobs) : key_(tuning_target_name(target)) {
    std::lock_guard<std::mutex> lock(knobs_mutex);
    trial_knobs()[key_] = knobs;
}

GemmCoreTrial::~GemmCoreTrial() {
    std::lock_guard<std::mutex> lock(knobs_mutex);
    trial_knobs().erase(key_);
}

}  // namespace qrnn
