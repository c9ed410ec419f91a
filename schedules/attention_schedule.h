// Schedules of the encoder-decoder's attention pipelines (core/attention.h), one per target family:
//   CPU: every GEMM (scores, context, mix; dk and dc (one), dW, dalpha, dc += dscore e, de) register-tiled with the
//        target's tile by cpu_common.h cpu_gemm (edge tiles shifted inwards: inputs read in place, no padded or
//        clamped copies), parallel over the fused tile loops; the mix and dk/dc over the T B rows r = b + t B (edge
//        tiles once, not per sequence), their row tiles in blocks of 16 so each h (c) tile's weight panel serves a
//        block of rows in cache; softmax per sequence; the encoder outputs (scores, dalpha) and the weights (dk, dc)
//        transposed in vector blocks. The per-sequence GEMMs (scores, context, dalpha, dc, de) parallel over (row
//        tile, b) with every column tile in the task: one task per register tile (1280 tasks of ~0.5 us at m=320,
//        K=64) kept the second core waiting on the thread pool's queue (Halide profiler: context, dc, de 0.8 ms each,
//        1.0-1.5 threads busy). 2 cores, quiet (AMD EPYC 26/2, 2026-11-23 07:15 UTC, load 1.1-1.5, 2 runs alternating
//        with the one-task-per-tile schedule beside it; forward / backward): host m=320 0.95-0.97 / 0.97-1.00 (beside
//        0.75-0.82 / 0.71-0.89), m=203 0.54-0.64 / 0.58-0.60; AVX2 0.95-1.02 / 0.95-0.99 (0.67-0.87 / 0.67-0.86),
//        0.98-1.02 / 0.88. With coarse tasks the thread pool beat serial calls at m=203 (3 runs alternating: host
//        0.63-0.68 / 0.62-0.66 vs 0.60-0.61 / 0.57-0.63): small calls are no longer run serially. Then quiet (07:43 UTC,
//        nothing else running, 3 runs): host m=320 0.93-1.01 / 0.99-1.05, m=203 0.64-0.65 / 0.59-0.65; AVX2 m=320
//        0.94-1.00 / 0.96-0.99, m=203 1.05-1.17 / 0.86-0.93. Open: host m=203 (one thread 0.70-0.79). There, one thread
//        (09:25 UTC): the mix ~0.15 ms, level with the best sgemm's 0.156; scores + enc_t ~0.04 vs 0.031; the rest
//        (context GEMM, sgemm 0.024, and softmax, transposes, o * mixed, which the references do not do) ~0.067;
//        2 cores gain 1.0-1.2x. Tried, no gain: the mix and dk/dc with wide_gemm_tile_for's 2 x 12 (host m=320
//        0.95-0.98 / 0.95-1.02 beside 0.95-1.00 / 0.99-1.02); mix tiles of one vector (pad m=203 least: 0.58-0.62
//        vs 0.63-0.68, m=320 0.82-0.84); the small stages serial (0.287 vs 0.263 ms); workers spinning between
//        parallel loops (the cost per loop is moving data between the cores, not the wake-up). Older figures below.
//        Quiet, 2 cores (this schedule, 2026-11-23 04:57 UTC, load 1.3, one run; forward / backward): host m=320
//        0.85 / 0.87, m=203 0.50 / 0.52; AVX2 0.82 / 0.85, 0.73 / 0.66. Then (load ~1.5, 3 runs each, alternating)
//        m=203 serial (64 MFLOP threshold) vs the thread pool (threshold 0): host 0.53-0.66 / 0.57-0.63 vs 0.53-0.62
//        / 0.57-0.64, AVX2 0.95-1.13 / 0.90-0.93 vs 0.94-1.14 / 0.85-0.86: serial kept. 0.90 met only by AVX2 m=203, in 3 of 4 runs.
//        `qrnn bench --what attention` (attn6, 2026-11-23, AMD EPYC fam 26 AVX-512 VM, 2 cores, load 2-4, alternating
//        with main 98fa4df, medians of 3 runs, forward / backward; main in brackets): one thread (--clock thread-cpu)
//        host m=320 0.80 / 0.86 (0.75 / 0.83), m=203 0.80 / 0.77 (0.67 / 0.70); AVX2 m=320 0.87 / 0.88 (0.87 /
//        0.86), m=203 0.897 / 0.84 (0.75 / 0.78); 2 cores host m=320 0.72 / 0.78 (0.71 / 0.72), m=203 0.66 / 0.58
//        (0.42 / 0.43); AVX2 m=320 0.78 / 0.76 (0.78 / 0.75), m=203 0.98 / 0.88 (0.78 / 0.59). 0.90 met only by AVX2
//        m=203 forward on 2 cores (0.98-1.05; one thread 0.80-0.90). Older figures below.
//        Quiet, 2 cores, host (main 8cb3964, load ~1.8, one run): T=S=64 B=16 m=320 forward 0.68 / backward 0.72;
//        T=37 S=53 B=5 m=203 0.47 / 0.39 (the target 0.90 is not met; the figures below are older or one-thread).
//        `qrnn bench --what attention` (ratio to the best sgemm on the same GEMMs; AMD EPYC AVX-512 VM, load ~13,
//        alternating with main c209d22 in one run, 2-4 runs each, median): T=S=64 B=16 m=320 forward 0.85 /
//        backward 0.51 (main 0.51 / 0.19), AVX2 0.88 / 0.59 (main 0.41 / 0.24); T=37 S=53 B=5 m=203 forward
//        0.62 / backward 0.71 (main 0.47 / 0.46), AVX2 1.0 / 0.93 (main 0.74 / 0.54). Quiet baselines of main:
//        0.42 / 0.35 and 0.53 / 0.45. Left: the mix, dk/dc and dW GEMMs without K blocking or packed panels
//        (~150-170 GFLOP/s under load), the enc transpose made twice (forward and backward), out = o * mixed a
//        separate pass. Single-thread CPU time (HL_NUM_THREADS=1, OMP/OpenBLAS 1 thread, CLOCK_PROCESS_CPUTIME_ID:
//        steady at load 14 where wall-time ratios of one binary ranged 0.47-0.91), ours / best sgemm sum, medians of 40:
//        T=S=64 B=16 m=320 AVX-512 forward 0.74 backward 0.75, AVX2 0.85 / 0.80; T=37 S=53 B=5 m=203 AVX-512
//        0.55-0.65 / 0.53-0.65, AVX2 0.71 / 0.77. At m=320 (AVX-512, sub-pipelines): dW 2.5-2.7 ms (dnnl 2.0), scores +
//        softmax + enc transpose 0.50 (dnnl scores 0.24), the out pass 0.22. Tried, no gain there: out = o * mixed in the
//        mix GEMM's epilogue (-2%), [b][s][h] copies of enc/cell for the per-b GEMMs (+-2%), mix/dk/dc tiled over b
//        (+4% at B=16, 3x slower at B=5), a 4x6 tile (+6% at m=320, -30% at m=203), dW K-blocked by rfactor with
//        accumulators in the output (1.6x slower), 2-D vectorised transposes (-15%).
//        dW's tile 2 x 12 with 32 registers (wide_gemm_tile_for; was 2 x 8): dW +3.5% at m=320, +6% at m=203, the
//        whole backward +1-2% (AVX2 unchanged). Single-thread CPU time (branch attn4, two runs at load 4-7, medians of
//        40; the runs differ by up to 0.1, mostly in the references), ours / best sgemm sum: m=320 AVX-512 forward
//        0.76-0.80 backward 0.78-0.81, AVX2 0.83-0.89 / 0.81-0.88; m=203 AVX-512 0.62-0.73 / 0.65-0.71, AVX2
//        0.72-0.75 / 0.73-0.80. None reaches 0.90.
//        Where the time goes (before the dW tile; AVX-512, m=320, ms, best sgemm in brackets): forward 3.0 = enc_t
//        ~0.15 + scores 0.18 (0.23) + softmax 0.04 + context and mix 2.34 (2.19) + out pass 0.28; backward 6.0 =
//        dW ~2.2 (2.03) + dk, dc ~2.0 (2.04) + dalpha ~0.27 (0.22) + dc += dscore e ~0.28 (0.20) + de ~0.44 (0.39)
//        + transposes and element-wise passes ~0.75. m=203: the register tiles' edges (203 = 6.3 tiles of 32 h,
//        T=37 = 4.6 tiles of 8) cost 10-20% in every GEMM. Also tried (attn4), no gain in the whole pipelines: dW blocked over K as
//        schedules/cpu_backward.cpp's dweights (rfactor blocks, the dmixed panel packed in L1): +5% with a 2 x 8
//        tile at m=320, -13% with 4 x 4, but its RoundUp tiles read past unpadded inputs (m=203 fails; GuardWithIf
//        tiles 4x slower) and AVX2's 2 x 6 needs m % 6 == 0; transposes staging each block's source lines in L1
//        (enc_t alone 1.6x faster, whole forward -2%); dgate_o and dmixed in one loop (compute_with, +-1%); dc and
//        de with the h tile's enc / cell / dk panel packed per sequence (+-1%).
//        attn5 (judged in one process against main's pipelines, single-thread CPU time, medians of 31; the A/B
//        harness reads ~3-7% against the runtime path on identical code, load 4-7): kept: dk and dc as one GEMM
//        dkc(c, b, t, i) (one region; each tile's weight panel serves every sequence) and dgate_o computed
//        with dmixed (compute_with): backward 11 -> 9 parallel regions, single-thread within -6%..+1% of main (host
//        and AVX2; not separable from the bias). Rejected: the forward in 3 regions (each b's enc_t, scores, softmax
//        and context in one loop over b, alpha fused by compute_with, which refuses Funcs with specializations, so
//        the context GEMM read a softmax Func): single-thread +-5%, 2-core wall (10th percentile of 41 under load 4-6)
//        6-20% slower at m=203 (5 tasks on 2 cores); out and mixed as one Tuple Func stored from the mix GEMM's tiles
//        (no out pass): forward 5-8% slower at m=203. After warm-up no call page-faults (runtime/buffer_cache.h).
//        Not tried for lack of time: (a) GEMMs over flattened rows r = b*T + t, (b) narrower edge tiles at m=203 (attn6).
//        This branch (single-thread, load 5-7): m=320 host forward 0.71-0.76 / backward 0.80-0.81, AVX2 0.84-0.87 /
//        0.86-0.87; m=203 host 0.60-0.65 / 0.63-0.69, AVX2 0.73-0.75 / 0.74-0.78. None reaches 0.90.
//        The "open lead" of attn5 (2 threads slower on the bench's tensors than on others) was the scratch harness:
//        it left OMP_WAIT_POLICY unset, so oneDNN's OpenMP threads spun after each reference call and took the second
//        core from the next timed call. With OMP_WAIT_POLICY=passive (what `qrnn` sets) the two agree (m=320, 2
//        threads wall, load ~4: forward 3.53 vs 3.50 ms, backward 6.27 vs 6.26; unset: backward 8.1-8.4 vs 6.2-6.4).
//        attn6 (one-thread CPU time of AOT builds of main 98fa4df and this schedule interleaved in one process, medians
//        of 41, host AVX-512 unless said; 3-5 runs at load 2-4, 2026-11-23): kept: the mix and dk/dc over the T B rows
//        in row blocks: m=320 forward 1.06-1.24x main, backward 1.02-1.11x; m=203 1.09-1.27x / 1.04-1.09x; AVX2 m=320
//        0.94-1.00x / 1.00-1.01x, m=203 0.96-1.17x / 1.03-1.05x (row blocks of 4, 8, 16, 32 tiles within 1% on host;
//        AVX2 mix blocks of 8 or 64 or none no better than 16; without blocks dk/dc at m=320 0.95x, either loop
//        order); small calls serial (2-core `qrnn bench` m=203 forward 0.68-0.73 / backward
//        0.76-0.78 vs main 0.46-0.64 / 0.42-0.74; at load 1.6-2.5 the thread pool did not beat serial at any
//        bench-like shape up to 503 MFLOP, so the threshold is a judgement, to re-check on a quiet machine).
//        Rejected: one-vector h tiles against the 10% h edge at m=203 (least_padded_tile's choice; 1 x 8, 1 x 12,
//        1 x 16 on the h GEMMs: forward 0.42-0.53 vs 0.48-0.72 with 2 x 8, backward 0.51-0.60 vs 0.56-0.73, load-port
//        bound: a weight vector and a broadcast per FMA). Where the time goes now (AOT profile, one thread, ms):
//        m=203 forward 0.31 = mix 0.21 (best sgemm 0.155; its h edge 224/203 and row edge cost ~14%) + enc_t 0.016
//        + scores 0.027 + context 0.028 + softmax 0.014 + out 0.006; backward 0.56 = dk/dc 0.19 (0.149) + dW 0.18
//        (0.150) + de 0.062 (0.044) + dc 0.036 (0.025) + transposes 0.034 + the rest; m=320 (after this change)
//        forward 3.09 = mix 2.22 + enc_t 0.18 + scores 0.23 + context 0.31 + softmax 0.06 + out 0.08, backward 6.04 =
//        dW 2.30 + dk/dc 2.10 + de 0.57 + dc 0.38 + dalpha 0.27 + enc_t 0.20 + dmixed 0.13 + weights_t 0.06.
//   CUDA: every stage at root, one thread per output element (32-wide rows), the third dimension in blocks;
//        reductions serial in the thread. Compiled and ptxas-assembled for sm_90 in tests (no GPU here).
#pragma once
#include "core/attention.h"

namespace qrnn {

Halide::Pipeline build_attention_forward(const AttentionInputs &in, const Halide::Target &target);
Halide::Pipeline build_attention_backward(const AttentionBackwardInputs &in, const Halide::Target &target);

}  // namespace qrnn
