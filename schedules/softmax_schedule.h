// Schedules of the softmax decoder (core/softmax_decoder.h): CPU (register-tiled GEMMs from the project's
// target-aware tile, schedules/cpu_common.h) and CUDA (compiled and PTX-assembled by the tests; no GPU here).
#pragma once
#include <Halide.h>

#include "core/softmax_decoder.h"

namespace qrnn {

// dhidden's vocabulary blocking on unpacked operands (the CUDA schedule's).
constexpr int kDecoderVocabBlock = 256;

// Rows of a weights buffer that serves any schedule for a vocabulary of V (rows past V zero): the CUDA
// schedule's logits tiles read past V, the CPU schedule's only when V is below its tile.
inline int64_t decoder_weight_rows(int64_t vocab) { return (vocab + kDecoderVocabBlock - 1) / kDecoderVocabBlock * kDecoderVocabBlock + 8; }

// The hidden width the CPU schedule requires a multiple of (its register tile: 2 vectors of `target`);
// the runtime (lm/softmax_decoder.h) pads other widths with zero columns.
int decoder_width_multiple(const Halide::Target &target);

// The panels schedule_softmax_decoder_cpu reads: the rows of its register tile (the core's; 3 vectors x 4 words
// with 16 vector registers). A chunk of rows is best a multiple of logits_rows (rows past one are computed and
// dropped: at 64-row panels 224 rows took 1.14x the time of 256).
DecoderPanels cpu_decoder_panels(const Halide::Target &target);

// Every Func of F (defined with cpu_decoder_panels(target)): logits, dhidden and dweights on the GEMM core
// (schedules/gemm_core.h), logits and dlogits computed once per chunk, the softmax reductions on vectors of rows.
// The training pipeline reads the weights packed by a pipeline of F.weights_pack (scheduled here too).
void schedule_softmax_decoder_cpu(DecoderFuncs &F, const Halide::Target &target);

// One GPU thread per output element (logits, dlogits, dhidden, dweights, dbias, per row for the reductions),
// tiles of 32 along the innermost dimension.
void schedule_softmax_decoder_cuda(DecoderFuncs &F, const Halide::Target &target);

}  // namespace qrnn
