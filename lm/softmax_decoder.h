// The language model's pieces around the recurrent stack: the softmax decoder (linear layer + fused
// log-softmax + cross-entropy loss + gradient, core/softmax_decoder.h on Halide, schedules/cpu_softmax.cpp)
// and the embedding lookup. Reference: reference/softmax_decoder.h.
#pragma once
#include <Halide.h>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/precision.h"
#include "runtime/tensor.h"

namespace qrnn::lm {

struct DecoderGrads {
    Tensor<float> dweights, dbias;  // [V][m], [V]: accumulated (+=); empty tensors start at zero
};

class SoftmaxDecoder {
public:
    // target: a Halide CPU target (parse_target of the config's string; default: HL_JIT_TARGET's).
    // precision: of the three GEMMs' operands (core/softmax_decoder.h).
    SoftmaxDecoder(int64_t vocab, int64_t hidden, const Halide::Target &target = Halide::get_jit_target_from_environment(),
                   Precision precision = Precision::f32);

    // Sum over the N rows of -log softmax(h W^T + b)[target] (each row's loss in float, summed in double).
    // h is [N][m] or [T][B][m] (N = T*B rows), weights [V][m], bias [V], targets [N] in [0, V).
    // With dh or grads: writes dh (shaped like h) and accumulates grads (+=). A target out of [0, V), or a
    // shape that does not fit, is a qrnn::Error naming it.
    double loss(const Tensor<float> &h, const std::vector<int32_t> &targets, const Tensor<float> &weights,
                const Tensor<float> &bias, Tensor<float> *dh = nullptr, DecoderGrads *grads = nullptr);
    // Each row's loss (evaluation only).
    std::vector<float> row_losses(const Tensor<float> &h, const std::vector<int32_t> &targets, const Tensor<float> &weights,
                                  const Tensor<float> &bias);

    // Rows per pipeline call: at most chunk_rows x V logits exist at once. Default: kDefaultChunkRows, fewer
    // where V is so large that their logits would pass kMaxChunkLogits, a multiple of the logits GEMM's panel
    // rows (cpu_decoder_panels) and of dbias' 16 lanes; the N rows then split into near-equal chunks of such
    // multiples (N = 2100 in 64-row panels: 6 x 320 + 180).
    int64_t chunk_rows() const { return chunk_; }
    void set_chunk_rows(int64_t rows);
    int64_t vocab() const { return vocab_; }
    int64_t hidden() const { return hidden_; }

    struct Compiled;  // the JIT-compiled pipelines of a target (shared by every decoder of that target)
    struct Scratch;   // per-decoder buffers reused from call to call

private:
    double run(const Tensor<float> &h, const std::vector<int32_t> &targets, const Tensor<float> &weights,
               const Tensor<float> &bias, Tensor<float> *dh, DecoderGrads *grads, std::vector<float> *rows);
    int64_t chunk_for(int64_t rows) const;  // the chunk size used for a call of `rows` rows
    static constexpr int64_t kDefaultChunkRows = 320;        // also the dweights GEMM's K: enough to amortise its tiles
    static constexpr int64_t kMaxChunkLogits = 16 << 20;     // floats (64 MB)
    int64_t vocab_, hidden_, chunk_;
    bool explicit_chunk_;
    std::shared_ptr<Compiled> compiled_;
    std::shared_ptr<Scratch> scratch_;
};

// x[i] = table[tokens[i]] for the T*B tokens; x is shaped by the caller ([T][B][m] or [N][m]).
void embedding_forward(const Tensor<float> &table /*[V][m]*/, const std::vector<int32_t> &tokens, Tensor<float> &x);
// dtable[tokens[i]] += dx[i], rows in order (deterministic).
void embedding_backward(const std::vector<int32_t> &tokens, const Tensor<float> &dx, Tensor<float> &dtable /* += */);

}  // namespace qrnn::lm
