// CPU schedule "fused": the scan's time loop is split into chunks and the activated gates of each chunk (all
// h, b, gates: a block that stays in L2) are computed inside it by the tuned GEMM + activation epilogue, so
// Z/F/O never go to memory.
// Figure (2-core AVX-512 VM, qrnn bench fo k=2 B=64 T=256 n=m=320): 1.020x tuned, 0.886 of its floor.
#include "core/chunked_scan.h"
#include "schedules/cpu_common.h"

namespace qrnn {
namespace {
using namespace Halide;

Pipeline build_cpu_fused(const LayerInputs &in, const PoolingVariant &variant, const Target &target, const Knobs &knobs,
                         const LayerShape &) {
    const int vec = target.natural_vector_size<float>();
    LayerFuncs L = define_qrnn_layer(in, variant);
    SingleScan S = single_scan(scan_source(L, in));
    Var h = L.h, b = L.b;
    schedule_cpu_inputs(L, in, vec);

    // Scan: time split into chunks (outermost, serial); per chunk, strips of (chains x vec) h for one b in
    // parallel, each scanning the chunk's steps serially.
    // The chunk loop ro is split first so both strip versions (schedule_scan_strips) share it: the conv is
    // computed at ro.
    RVar ro("ro"), ri("ri");
    Stage scan = S.cell.update(0);
    scan.split(S.r.x, ro, ri, knobs.at("chunk"), TailStrategy::GuardWithIf);
    schedule_scan_strips(scan, h, L.m, vec, knobs.at("chains"), [&](Stage &s, const Var &so, const Var &su, const Var &sv) {
        schedule_scan_rows(s, b, L.B, L.m, ri, so, su, sv, {ro});
    });
    scan.specialize(in.zoneout_threshold == 0);

    // Activated gates of the chunk (all h, b, gates: a cache-sized block) computed at the chunk by the tuned
    // GEMM with the activations in its epilogue, parallel over (time tiles, b).
    const bool b_inner = knobs.at("b_inner");
    GemmTiles v = schedule_cpu_gates_gemm(L, vec, knobs.at("tile_h_vectors"), knobs.at("tile_t"), b_inner);
    Var tb("tb");
    L.gates.compute_at(S.cell, ro);
    if (b_inner) L.gates.fuse(v.ho, v.to, tb).parallel(tb);
    else L.gates.fuse(v.to, b, tb).parallel(tb);
    L.gates.specialize(in.zoneout_threshold == 0);
    return Pipeline(S.cell);
}

const bool cpu_fused_registered = [] {
    LayerSchedule s{{"fused", "CPU: conv computed per time chunk inside the scan (gates stay in cache)", "cpu",
                     {{"chunk", 32}, {"chains", 4}, {"tile_h_vectors", 2}, {"tile_t", 8}, {"b_inner", 1}}}};
    s.knob_specs = {{"chunk", {"time steps per chunk (conv block computed inside the scan)", {8, 16, 32, 64, 128}, 1, 4096}},
                    {"chains", chains_knob_spec()},
                    {"b_inner", {"1: batch loop inside the h tile (weights streamed once per time tile); 0: b outermost", {0, 1}, 0, 1}}};
    s.knob_specs.merge(conv_tile_knob_specs());
    s.build = build_cpu_fused;
    // Not on the GEMM core: the conv's tile as the other schedules' own GEMMs (gemm_tile_for).
    s.target_defaults = [base = s.defaults](const Target &t) { return with_gemm_tile(base, t, gemm_tile_for(t)); };
    register_layer_schedule(s);
    return true;
}();
}  // namespace
}  // namespace qrnn
