// The GEMM core's knobs for a target on this CPU: the register tiles of the ops on the core and its two block sizes.
// Defaults are derived from the target (vector registers) and the caches; `qrnn autotune --gemm` measures others and
// records them in the tuning database as "gemm-core" records (schedules/tuning_db.h), and from then on every op
// on the core uses the best of them for this CPU and target: the layer's conv (and the CNN's, and the LM decoder's
// GEMMs with 32 vector registers), the training backward's dW and dX, through the schedules' target defaults.
#pragma once
#include <Halide.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "schedules/cpu_common.h"

namespace qrnn {

struct TuningRecord;

// The name of the tuning database's records of the core's knobs.
inline constexpr const char *kGemmCoreSchedule = "gemm-core";

struct GemmCoreKnobs {
    GemmTile conv;       // the layer's conv GEMM (knobs tile_h_vectors, tile_t); the decoder's with 32 registers
    GemmTile dweights;   // the backward's dW (dw_h_vectors, tile_c)
    GemmTile dinput;     // the backward's dX (dx_c_vectors, dx_tile_t)
    int64_t block_bytes = 0;  // a column block's operand (gemm_core.h), knob block_kib
    int64_t panel_bytes = 0;  // a panel's K block, knob panel_kib
    std::string source = "defaults";  // or "tuned: <database> line N"

    Knobs knobs() const;  // as a tuning record's knobs
    bool operator==(const GemmCoreKnobs &o) const;
    std::string describe() const;  // "conv 4x6, dW 4x4, dX 5x5, blocks 2048K / 512K (defaults)"
};

GemmCoreKnobs default_gemm_core_knobs(const Halide::Target &target);
// Knobs of a record as core knobs for `target`; throws qrnn::Error naming the knob if one is missing, outside its
// range, or a tile that does not fit the target's vector registers (accumulators + loads + a broadcast).
GemmCoreKnobs gemm_core_knobs_from(const Knobs &knobs, const Halide::Target &target);

// What the core uses for `target`: a trial's knobs (GemmCoreTrial), else the best record of this CPU and target in
// the tuning database (default_tuning_db_path(), read once per process; QRNN_GEMM_TUNING=defaults ignores it),
// else the defaults.
GemmCoreKnobs gemm_core_knobs(const Halide::Target &target);

// The best "gemm-core" record for `target` and `cpu`: at the shape of the newest such record (scores at one shape
// compare), the knobs of the highest mean score over their verified records (the newest of them, its score that
// mean), but the defaults' unless that mean passes theirs by kGemmCoreMargin (a trial's score moves by 1-2% between
// runs); none if there is none.
inline constexpr double kGemmCoreMargin = 1.01;
std::optional<TuningRecord> best_gemm_core_record(const std::vector<TuningRecord> &records, const std::string &target,
                                                  const std::string &cpu);

// While it lives, gemm_core_knobs(target) returns `knobs` (one trial of `qrnn autotune --gemm`; pipelines compiled
// meanwhile must not be cached for later use).
class GemmCoreTrial {
public:
    GemmCoreTrial(const Halide::Target &target, const GemmCoreKnobs &knobs);
    ~GemmCoreTrial();
    GemmCoreTrial(const GemmCoreTrial &) = delete;
    GemmCoreTrial &operator=(const GemmCoreTrial &) = delete;

private:
    std::string key_;
};

}  // namespace qrnn
