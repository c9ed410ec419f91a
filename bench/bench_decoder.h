// `qrnn bench --what decoder`: the language model's softmax decoder (lm/softmax_decoder.h) against the best
// sgemm of this machine on the same three GEMMs (logits = h W^T, dh = dlogits W, dW = dlogits^T h), each
// reference given its operands in the layout it wants (transposed once, outside the timing).
#pragma once
#include <Halide.h>

#include <memory>

#include "core/precision.h"

namespace qrnn::bench {

class DecoderGemms {
public:
    DecoderGemms(int64_t rows, int64_t hidden, int64_t vocab, const Halide::Target &target,
                 Precision precision = Precision::f32);
    void run_training();    // loss + dh + dW/db accumulated: the three GEMMs and the fused softmax
    void run_evaluation();  // loss only: the logits GEMM and the softmax
    // Reference i (sgemm_references(target)[i]) on GEMM g: 0 logits, 1 dh, 2 dW.
    void run_reference(size_t i, int g);
    double gemm_flops() const;  // of one GEMM: 2 N m V
    // |our loss - loss from reference i's logits| / |loss| (both compute the same logits).
    double loss_rel_diff(size_t i);

private:
    struct State;
    std::shared_ptr<State> s_;
};

}  // namespace qrnn::bench
