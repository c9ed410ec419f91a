// Schedule pieces shared by the CPU schedules.
#pragma once
#include "schedules/schedule.h"

namespace qrnn {

// input_padded and weights_clamped computed once, vectorised and parallel (both are read many times).
void schedule_cpu_inputs(LayerFuncs &L, const LayerInputs &in, int vec);

// The conv as a register-blocked GEMM into its own buffer (conv.in(), compute_root): each
// (tile_h_vectors * vec) x tile_t output tile accumulates in registers over (c, j). Returns the wrapper.
Halide::Func schedule_cpu_conv_gemm(LayerFuncs &L, int vec, int tile_h_vectors, int tile_t);

// Splits h of a scan stage into vec * chains lanes, vectors unrolled (independent chains in flight) around
// the serial scan variable; ho is the outer var. Guarded: m need not be a multiple.
void split_scan_h(Halide::Stage stage, const Halide::Var &h, int vec, int chains, Halide::Var &ho,
                               Halide::Var &hu, Halide::Var &hv);

// The two-level scan of core/chunked_scan.h: local scans parallel over (b, groups of `interleave` chunks,
// scanned together for independent chains), carry serial over chunks, fix-up parallel over chunks.
struct ChunkedScan;
void schedule_cpu_chunked_scan(ChunkedScan &S, const Halide::Var &h, const Halide::Var &b, const Halide::Var &t, int vec,
                               int chains, int interleave);

}  // namespace qrnn
