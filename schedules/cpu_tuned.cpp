// CPU schedule "tuned": the conv on the GEMM core (schedules/gemm_core.h) with the activations in its epilogue
// (activated gates stored), then a vectorised scan with time serial inside each block of b (one per core, whole
// (b, h) rows per step) or, at B = 1 and m < 128, each (chains x vector of h) strip, parallel over blocks/strips.
// Figure: its conv GEMM at 0.99 of the best sgemm at 640 units, B=20 T=105 (docs/measurements.md).
#include "schedules/cpu_common.h"
#include "schedules/gemm_core.h"

namespace qrnn {
namespace {
using namespace Halide;

void apply_cpu_tuned(LayerFuncs &L, const LayerInputs &in, const Target &target, const Knobs &knobs) {
    const int vec = target.natural_vector_size<float>();
    schedule_cpu_inputs(L, in, vec);
    schedule_cpu_gates_root(L, in, gemm_blocking(target, {knobs.at("tile_h_vectors"), knobs.at("tile_t")}));
    // Scan: time innermost-serial, vectorised over h.
    schedule_serial_scan(L.cell, L.h, L.b, L.scan_r.x, L.B, L.m, vec, knobs.at("chains"), in.zoneout_threshold);
}

const bool cpu_tuned_registered = [] {
    LayerSchedule s{{"tuned", "hand-written CPU: register-blocked GEMM conv + vectorised serial-time scan", "cpu",
                     {{"tile_h_vectors", 2}, {"tile_t", 8}, {"chains", 4}}},
                    apply_cpu_tuned};
    s.knob_specs = conv_tile_knob_specs();
    s.knob_specs["chains"] = chains_knob_spec();
    s.target_defaults = [base = s.defaults](const Target &t) { return with_gemm_tile(base, t); };
    s.conv_h_tile = gemm_h_tile;
    s.int8 = true;
    register_layer_schedule(s);
    return true;
}();
}  // namespace
}  // namespace qrnn
