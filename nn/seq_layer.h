// The variable-length / bidirectional QRNN layer (core/qrnn_seq.h) as a trainable nn::Layer.
//
// Lengths: set_lengths({len_0, ..., len_{B-1}}), each in [1, T] of the next forward (empty: every sequence is
// T long). Outputs past a sequence's end are 0, the final state is the one at each sequence's end, gradients
// ignore the padding; results equal running each sequence alone. Two directions: output [T][B][2m]
// (forward | reverse) or summed [T][B][m]; the reverse direction has no state across calls, so a forward
// from a state whose time is not 0 (a chunk of a longer sequence) is refused.
// State: "history" [max(k-1,1)][B][n] and "c" [B][m] of the forward direction (at each sequence's end),
// and with two directions "c_reverse" [B][m] (the reverse scan's state at t = 0). Params: "weights"
// [D*G][k][n][m] (rows [G, 2G): the reverse direction), "bias" [D*G][m].
// Models: "qrnn-varlen", "qrnn-bidir", "qrnn-bidir-sum", "qrnn-bidir-varlen" (layer factories; the -varlen
// ones draw seeded lengths, seq_lengths()); for a LayerStack of them, set_stack_lengths().
#pragma once
#include "nn/int8_calibration.h"
#include "nn/stack.h"
#include "runtime/compiled_seq.h"

namespace qrnn::nn {

class SeqQrnnLayer : public Layer {
public:
    // Layer `index` of a stack of cfg (input width cfg.input, else hidden * output factor), seeded as init_params.
    SeqQrnnLayer(const ModelConfig &cfg, int64_t index, const SeqOptions &options);
    std::string kind() const override { return cfg_.model; }
    int64_t input_size() const override { return n_; }
    int64_t output_size() const override { return cfg_.hidden * options_.out_width_factor(); }
    State initial_state(int64_t batch) const override;
    void set_stochastic(bool on) override { cfg_.stochastic = on; }
    void set_mask_draw(uint64_t draw) override { cfg_.mask_draw = draw; }
    std::unique_ptr<Tape> make_tape() const override;
    void set_int8_calibration(bool on) override;
    const Int8LayerParams *quantized() const override { return int8_.quantized(); }
    void set_quantized(Int8LayerParams p) override;
    const Int8LayerParams &int8_params() const { return int8_.params(index_); }
    void forward(const Tensor<float> &x, State &state, Tensor<float> &y, Tape *tape) override;
    void backward(const Tape &tape, const Tensor<float> &dy, const State *d_final, Tensor<float> *dx,
                  State *d_initial) override;
    std::vector<Param> params() override;
    double forward_flops(int64_t T, int64_t B) const override;
    double backward_flops(int64_t T, int64_t B) const override;

    void set_lengths(std::vector<int32_t> lengths) { lengths_ = std::move(lengths); }
    const std::vector<int32_t> &lengths() const { return lengths_; }
    const SeqOptions &options() const { return options_; }
    const LayerParams<float> &layer_params() const { return params_; }

private:
    ModelConfig cfg_;
    int64_t index_, n_;
    SeqOptions options_;
    std::vector<int32_t> lengths_;
    LayerParams<float> params_, grads_;
    void compile_int8();  // compiled_int8_, once
    std::shared_ptr<CompiledSeqLayer> compiled_, compiled_int8_;  // int8: made when its parameters are set
    Int8Calibration int8_;  // int8 (cfg_.precision): while calibrating, forwards run in f32
    LayerGradsF scratch_;
    std::unique_ptr<Tape> scratch_tape_;  // the tape of a forward called without one
};

// Seeded lengths of a -varlen model (sequence 0 is T long, the others in [1, T]); all T for the others.
std::vector<int32_t> seq_lengths(const ModelConfig &cfg);
// set_lengths on every SeqQrnnLayer of the stack (throws qrnn::Error if it holds none).
void set_stack_lengths(LayerStack &stack, const std::vector<int32_t> &lengths);
// The options of a seq model name ("qrnn-bidir-sum" -> two directions, summed); throws for another name.
SeqOptions seq_model_options(const std::string &model);
bool is_seq_model(const std::string &model);

}  // namespace qrnn::nn
