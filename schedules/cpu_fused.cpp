// CPU schedule "fused": the scan's time loop is split into chunks and the conv (a small register-blocked
// GEMM over the strip's h vectors x chunk x gates) is computed per chunk inside it, so Z/F/O never go to
// memory. Measured on the 2-core AVX-512 VM: see docs/schedules.md.
#include "core/chunked_scan.h"
#include "schedules/cpu_common.h"

namespace qrnn {
namespace {
using namespace Halide;

Pipeline build_cpu_fused(const LayerInputs &in, const PoolingVariant &variant, const Target &target, const Knobs &knobs,
                         const LayerShape &) {
    const int vec = target.natural_vector_size<float>();
    const int chains = knobs.at("tile_h_vectors"), chunk = knobs.at("chunk"), tile_t = knobs.at("tile_t");
    LayerFuncs L = define_qrnn_layer(in, variant);
    SingleScan S = single_scan(scan_source(L, in));
    Var h = L.h, b = L.b, t = L.t, g = L.g;
    schedule_cpu_inputs(L, in, vec);

    // Scan: strips of (chains x vec) h for one b, parallel; time split into chunks.
    Var ho("ho"), hu("hu"), hv("hv"), strip("strip");
    RVar ro("ro"), ri("ri");
    Stage scan = S.cell.update(0);
    split_scan_h(scan, h, vec, chains, ho, hu, hv);
    scan.split(S.r.x, ro, ri, chunk, TailStrategy::GuardWithIf).reorder(hv, hu, ri, ro, ho, b).fuse(ho, b, strip).parallel(strip);
    scan.specialize(in.zoneout_threshold == 0);

    // Conv per (strip, chunk): gates x tile_t x chains vectors of accumulators over (c, j).
    // h is split by the strip first (RoundUp) so the unrolled loops have constant extents.
    Var to("to"), ti("ti"), hs("hs"), hi("hi");
    L.conv.bound(g, 0, variant.gate_count());
    L.conv.compute_at(S.cell, ro).vectorize(h, vec, TailStrategy::RoundUp).unroll(g);
    L.conv.update()
        .split(t, to, ti, tile_t, TailStrategy::RoundUp)
        .split(h, hs, hi, vec * chains, TailStrategy::RoundUp)
        .split(hi, ho, hv, vec)
        .reorder(hv, ho, g, ti, L.conv_r.x, L.conv_r.y, to, hs, b)
        .vectorize(hv)
        .unroll(ho)
        .unroll(g)
        .unroll(ti);
    return Pipeline(S.cell);
}

const bool registered = [] {
    LayerSchedule s{"fused", "CPU: conv computed per time chunk inside the scan (gates never stored)", "cpu",
                    {{"tile_h_vectors", 1}, {"chunk", 16}, {"tile_t", 4}}, nullptr};
    s.knob_specs = {{"tile_h_vectors", {"h vectors per strip (scan chains, GEMM tile height)", {1, 2}}},
                    {"chunk", {"time steps per conv chunk", {8, 16, 32, 64}}},
                    {"tile_t", {"GEMM tile width in time steps (divides work of a chunk)", {2, 4, 8}}}};
    s.build = build_cpu_fused;
    register_layer_schedule(s);
    return true;
}();
}  // namespace
}  // namespace qrnn
