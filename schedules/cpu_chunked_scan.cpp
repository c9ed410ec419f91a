// CPU schedule "chunked-scan": GEMM conv + activations as in "tuned", then the two-level scan of
// core/chunked_scan.h (local scans parallel over chunks, serial carry over chunk ends, parallel fix-up):
// parallel time for long sequences with small batch. Figure (2-core AVX-512 VM, qrnn bench fo B=1 n=m=320):
// layer 0.97x tuned at T=4096; scan alone 0.36-0.44x serial (both memory-bound, 10 vs 4 floats moved per
// element: docs/schedules.md).
#include "core/chunked_scan.h"
#include "schedules/cpu_common.h"
#include "schedules/gemm_core.h"

namespace qrnn {
namespace {
using namespace Halide;

Pipeline build_cpu_chunked(const LayerInputs &in, const PoolingVariant &variant, const Target &target,
                           const Knobs &knobs, const LayerShape &) {
    const int vec = target.natural_vector_size<float>();
    LayerFuncs L = define_qrnn_layer(in, variant, gemm_h_tile(target, knobs));
    ChunkedScan S = chunked_scan(scan_source(L, in), knobs.at("chunk"));
    schedule_cpu_inputs(L, in, vec);
    schedule_cpu_gates_root(L, in, gemm_blocking(target, {knobs.at("tile_h_vectors"), knobs.at("tile_t")}));

    schedule_cpu_chunked_scan(S, L.h, L.b, L.t, L.m, vec, knobs.at("chains"), knobs.at("interleave"));
    return Pipeline(S.cell);
}

const bool cpu_chunked_scan_registered = [] {
    LayerSchedule s{{"chunked-scan", "CPU: GEMM conv + two-level scan (local scans, carry, fix-up) parallel in time", "cpu",
                     {{"chunk", 64}, {"chains", 4}, {"interleave", 4}, {"tile_h_vectors", 2}, {"tile_t", 8}}}};
    s.knob_specs = {{"chunk", {"time steps per chunk of the two-level scan", {16, 32, 64, 128, 256}, 2, 4096}},
                    {"chains", chains_knob_spec()},
                    {"interleave", {"chunks scanned together in the local scans (independent chains)", {1, 2, 4, 8}, 1, 16}}};
    s.knob_specs.merge(conv_tile_knob_specs());
    s.build = build_cpu_chunked;
    s.target_defaults = [base = s.defaults](const Target &t) { return with_gemm_tile(base, t); };
    register_layer_schedule(s);
    return true;
}();
}  // namespace
}  // namespace qrnn
