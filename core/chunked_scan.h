// Alternative definitions of the pooling scan over the activated gates, for schedules that need another
// loop structure than LayerFuncs::cell (two stages, t = 0 then t in [1, T)). Same outputs: (h, b, t) ->
// {c_t, h_t}. Both exploit nothing but the recurrence c_t = a_t * c_{t-1} + b_t of the pooling variant.
#pragma once
#include <Halide.h>

#include "core/qrnn_layer.h"

namespace qrnn {

// What a scan consumes: gates (h, b, t, g) in the variant's order, c0 (h, b), sequence length T.
struct ScanSource {
    Halide::Func gates;
    Halide::Func c0;
    Halide::Expr T;
    const PoolingVariant *variant = nullptr;
    Halide::Var h, b, t;
};

ScanSource scan_source(const LayerFuncs &L, const LayerInputs &in);

// One update over t in [0, T) (c_{-1} = c0), so a schedule can split time into chunks and compute the
// convolution per chunk inside the scan.
struct SingleScan {
    Halide::Func cell{"cell_single"};  // (h, b, t) -> {c_t, h_t}
    Halide::RDom r;                    // t in [0, T)
};
SingleScan single_scan(const ScanSource &src);

// Two-level scan over chunks of `chunk` steps: per-chunk local scans from 0 (parallel over chunks), a
// serial carry pass over chunk ends, and an element-wise fix-up c_t = L_t + A_t * carry. With
// L, A the local scan and product of a inside the chunk: c_t = L_t + A_t * c_{chunk start - 1}.
struct ChunkedScan {
    Halide::Var i{"i"}, j{"j"};        // step inside a chunk, chunk index
    Halide::Func coeffs{"scan_coeffs"};  // (h, b, t) -> {a_t, b_t}
    Halide::Func local{"chunk_local"};   // (h, b, i, j) -> {L, A}
    Halide::RDom local_r;                // i in [1, chunk)
    Halide::Func carry{"chunk_carry"};   // (h, b, j): c before chunk j (c0 for j = 0)
    Halide::RDom carry_r;                // j in [1, chunks)
    Halide::Func cell{"cell_chunked"};   // (h, b, t) -> {c_t, h_t}
    int chunk = 0;
};
ChunkedScan chunked_scan(const ScanSource &src, int chunk);

}  // namespace qrnn
