// `qrnn bench --what attention`: the encoder-decoder's attention pipelines (runtime/compiled_attention.h) against
// the best sgemm of this machine on the GEMMs they contain, each reference given its operands per sequence b in
// the layout it wants (laid out once, outside the timing). The GEMMs, for T targets, S sources, B sequences, m units:
//   forward  0 scores   per b: C[T][S] = c_b[T][m] e_b^T[m][S]
//            1 context  per b: C[T][m] = alpha_b[T][S] e_b[S][m]
//            2 mix           : C[T*B][m] = [k c][T*B][2m] [W_k; W_c][2m][m]
//   backward 3 dk, dc        : C[T*B][2m] = dmixed[T*B][m] [W_k^T W_c^T][m][2m]
//            4 dW            : C[2m][m] = [k c]^T[2m][T*B] dmixed[T*B][m]
//            5 dalpha   per b: C[T][S] = dk_b[T][m] e_b^T[m][S]
//            6 dc += dscore e per b: C[T][m] = dscore_b[T][S] e_b[S][m]
//            7 de       per b: C[S][m] = [alpha^T dscore^T]_b[S][2T] [dk; c]_b[2T][m]
// and oneDNN's primitives (bench/onednn_row_ops.h) on the passes that are not GEMMs:
//   forward  0 softmax over s of GEMM 0's scores (every source position valid: lengths = S)
//            1 out = o * mixed
//   backward 2 dmixed = dout * o and dgate_o = dout * mixed
//            3 dscore = alpha * (dalpha - sum_s alpha dalpha), dalpha from GEMM 5
// A chain runs chosen references on every step of one direction in the order of the computation (forward
// 0 P0 1 2 P1, backward P2 3 4 5 P3 6 7): the same work as ours, done as a user would with the libraries.
#pragma once
#include <Halide.h>

#include <memory>
#include <string>
#include <vector>

namespace qrnn::bench {

class AttentionGemms {
public:
    AttentionGemms(int64_t T, int64_t S, int64_t B, int64_t m, const Halide::Target &target);
    void run_forward();   // the whole forward pipeline (GEMMs 0-2 and the masked softmax)
    void run_backward();  // the whole backward pipeline (GEMMs 3-7 and the softmax's backward)
    static constexpr int kForwardGemms = 3, kGemms = 8;
    // Reference i (sgemm_references(target)[i]) on GEMM g (above), all its sequences.
    void run_reference(size_t i, int g);
    double gemm_flops(int g) const;
    static constexpr int kForwardPasses = 2, kPasses = 4;
    // The pass references: oneDNN on its threads ("dnnl") or on the calling thread ("dnnl-1t").
    static const std::vector<std::string> &pass_references();
    void run_reference_pass(size_t i, int p);  // pass reference i on pass p (above)
    // |pass reference i's result - a double-precision loop's| (max over the entries of every pass), for the
    // operands of the timed calls: the passes compute what ours do.
    double passes_abs_diff(size_t i);
    // The chain of one direction: sgemm reference gemm_refs[k] on that direction's k-th GEMM, pass reference
    // pass_refs[k] on its k-th pass.
    void run_reference_chain(bool forward, const std::vector<size_t> &gemm_refs, const std::vector<size_t> &pass_refs);
    // |our alpha - softmax of reference i's scores| (max over entries): both compute the same scores.
    double alpha_abs_diff(size_t i);
    std::string shape() const;  // "T=.. S=.. B=.. m=.."

private:
    struct State;
    std::shared_ptr<State> s_;
};

}  // namespace qrnn::bench
