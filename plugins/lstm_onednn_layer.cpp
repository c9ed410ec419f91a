// Trainable layer "lstm-onednn" (nn::Layer): oneDNN 2.x lstm_forward (forward_training with a workspace when
// a tape is recorded, forward_inference otherwise) and lstm_backward. Primitives are built once per (T, B);
// the weights are reordered from our layout (ldigo) into the primitives' formats on every call (they change
// between training steps), the weight gradients back into ldigo and added to the layer's gradients.
// bf16 (--precision bf16): oneDNN's bf16 LSTM training, its data types as oneDNN 2.6 takes them: the input, h
// (h0, each step's, h_T), the layer's output and the weights in bf16, converted from and to our f32 tensors here;
// c, the bias and every gradient (dx, dh0, dc0, the weights') in f32.
#include <dnnl.hpp>
#include <map>

#include "core/error.h"
#include "plugins/lstm_layer.h"
#include "plugins/lstm_model.h"
#include "plugins/onednn_memory.h"
#include "runtime/compiled_layer.h"

namespace qrnn {
namespace {
using onednn::f32;
using onednn::tag;
using dnnl::memory;

struct OnednnTape : nn::Tape {
    int64_t T = 0, B = 0;
    Tensor<float> c0, c_T;                 // the forward's cell states
    Tensor<float> x, h0, y, h_T;           // f32: the forward's input, h0 and outputs
    memory x_act, h0_act, y_act, h_T_act;  // x, h0, y, h_T as the primitives read them: over the tensors (f32), or bf16
    memory workspace;
};

class LstmOnednnLayer : public LstmLayer {
public:
    LstmOnednnLayer(const ModelConfig &cfg, int64_t index)
        : LstmLayer("lstm-onednn", lstm_options(cfg), index), engine_(dnnl::engine::kind::cpu, 0), stream_(engine_),
          act_(parse_precision(cfg.precision) == Precision::bf16 ? memory::data_type::bf16 : memory::data_type::f32) {}

    std::unique_ptr<nn::Tape> make_tape() const override { return std::make_unique<OnednnTape>(); }

    void forward(const Tensor<float> &x, nn::State &state, Tensor<float> &y, nn::Tape *tape_base) override {
        check_forward(x, state);
        const int64_t T = x.dim(0), B = x.dim(1);
        Primitives &p = primitives(T, B);
        OnednnTape *tape = tape_base ? &dynamic_cast<OnednnTape &>(*tape_base) : nullptr;
        const auto &pd = tape ? p.training_pd : p.inference_pd;
        ensure_shape(y, {T, B, m_});
        Tensor<float> h_T({B, m_}), c_T({B, m_});
        // bf16: the input and h0 converted, the outputs written in bf16 and converted back below, into the tape's
        // memories (kept for the backward, reused by the next step's forward) or the scratch's.
        memory x_act, h0_act, y_act = outputs(p.layer_out, y, tape ? tape->y_act : scratch_[10]),
                              h_T_act = outputs(p.state, h_T, tape ? tape->h_T_act : scratch_[11]);
        run([&] {
            x_act = activations(p.layer_in, p.d_layer_in, x, tape ? tape->x_act : scratch_[8]);
            h0_act = activations(p.state, p.d_state, state.at("h"), tape ? tape->h0_act : scratch_[9]);
        });
        std::unordered_map<int, memory> args{
            {DNNL_ARG_SRC_LAYER, x_act},
            {DNNL_ARG_SRC_ITER, h0_act},
            {DNNL_ARG_SRC_ITER_C, wrap(p.state_c, state.at("c"))},
            {DNNL_ARG_WEIGHTS_LAYER, prepared(pd.weights_layer_desc(), wrap(p.user_w_layer, value_.w_input), tape ? 2 : 0)},
            {DNNL_ARG_WEIGHTS_ITER, prepared(pd.weights_iter_desc(), wrap(p.user_w_iter, value_.w_recurrent), tape ? 3 : 1)},
            {DNNL_ARG_BIAS, wrap(p.bias, value_.bias)},
            {DNNL_ARG_DST_LAYER, y_act},
            {DNNL_ARG_DST_ITER, h_T_act},
            {DNNL_ARG_DST_ITER_C, wrap(p.state_c, c_T)}};
        if (tape) {
            if (!tape->workspace || tape->workspace.get_desc() != pd.workspace_desc())
                tape->workspace = memory(pd.workspace_desc(), engine_);
            args[DNNL_ARG_WORKSPACE] = tape->workspace;
        }
        run([&] {
            (tape ? p.training : p.inference).execute(stream_, args);
            if (bf16()) to_f32(y_act, p.d_layer_out, y), to_f32(h_T_act, p.d_state, h_T);
        });
        if (tape) {
            tape->T = T, tape->B = B;
            tape->c0 = state.at("c"), tape->c_T = c_T;
            if (!bf16()) {  // over the tape's own copies (bf16: the tape's memories hold them already)
                tape->x = x, tape->h0 = state.at("h"), tape->y = y, tape->h_T = h_T;
                tape->x_act = wrap(p.layer_in, tape->x), tape->h0_act = wrap(p.state, tape->h0);
                tape->y_act = wrap(p.layer_out, tape->y), tape->h_T_act = wrap(p.state, tape->h_T);
            }
        }
        state.at("h") = std::move(h_T);
        state.at("c") = std::move(c_T);
        state.time += T;
    }

    void backward(const nn::Tape &tape_base, const Tensor<float> &dy, const nn::State *d_final, Tensor<float> *dx,
                  nn::State *d_initial) override {
        const auto &tape = dynamic_cast<const OnednnTape &>(tape_base);
        if (!tape.workspace) fail("lstm-onednn: backward needs the tape of a forward pass");
        const int64_t T = tape.T, B = tape.B;
        check_backward(T, B, dy, d_final);
        Primitives &p = primitives(T, B);
        const auto &pd = p.backward_pd;
        Tensor<float> zeros({B, m_}), dx_own, dh0_own, dc0_own;
        Tensor<float> &dx_out = dx ? *dx : dx_own;
        ensure_shape(dx_out, {T, B, n_});
        Tensor<float> &dh0 = d_initial ? d_initial->at("h") : dh0_own, &dc0 = d_initial ? d_initial->at("c") : dc0_own;
        for (Tensor<float> *t : {&dh0, &dc0})
            ensure_shape(*t, {B, m_});
        memory &d_w_layer = scratch(pd.diff_weights_layer_desc(), 6), &d_w_iter = scratch(pd.diff_weights_iter_desc(), 7);
        Tensor<float> d_bias(value_.bias.shape);
        std::unordered_map<int, memory> args{
            {DNNL_ARG_SRC_LAYER, tape.x_act},
            {DNNL_ARG_SRC_ITER, tape.h0_act},
            {DNNL_ARG_SRC_ITER_C, wrap(p.state_c, tape.c0)},
            {DNNL_ARG_WEIGHTS_LAYER, prepared(pd.weights_layer_desc(), wrap(p.user_w_layer, value_.w_input), 4)},
            {DNNL_ARG_WEIGHTS_ITER, prepared(pd.weights_iter_desc(), wrap(p.user_w_iter, value_.w_recurrent), 5)},
            {DNNL_ARG_BIAS, wrap(p.bias, value_.bias)},
            {DNNL_ARG_DST_LAYER, tape.y_act},
            {DNNL_ARG_DST_ITER, tape.h_T_act},
            {DNNL_ARG_DST_ITER_C, wrap(p.state_c, tape.c_T)},
            {DNNL_ARG_WORKSPACE, tape.workspace},
            {DNNL_ARG_DIFF_DST_LAYER, wrap(p.d_layer_out, dy)},
            {DNNL_ARG_DIFF_DST_ITER, wrap(p.d_state, d_final ? d_final->at("h") : zeros)},
            {DNNL_ARG_DIFF_DST_ITER_C, wrap(p.state_c, d_final ? d_final->at("c") : zeros)},
            {DNNL_ARG_DIFF_SRC_LAYER, wrap(p.d_layer_in, dx_out)},
            {DNNL_ARG_DIFF_SRC_ITER, wrap(p.d_state, dh0)},
            {DNNL_ARG_DIFF_SRC_ITER_C, wrap(p.state_c, dc0)},
            {DNNL_ARG_DIFF_WEIGHTS_LAYER, d_w_layer},
            {DNNL_ARG_DIFF_WEIGHTS_ITER, d_w_iter},
            {DNNL_ARG_DIFF_BIAS, wrap(p.bias, d_bias)}};
        run([&] {
            // oneDNN accumulates into the weight gradients: start them from zero.
            for (memory *d : {&d_w_layer, &d_w_iter}) zero(*d);
            p.backward.execute(stream_, args);
            accumulate(d_w_layer, p.user_w_layer, grad_.w_input, plain_[0]);
            accumulate(d_w_iter, p.user_w_iter, grad_.w_recurrent, plain_[1]);
        });
        for (size_t i = 0; i < d_bias.size(); i++) grad_.bias.data[i] += d_bias.data[i];
    }

private:
    struct Primitives {
        memory::desc layer_in, layer_out, state;        // x, y, h in act_ (f32 or bf16)
        memory::desc d_layer_in, d_layer_out, d_state;  // the same in f32: their gradients, and our tensors
        memory::desc state_c, user_w_layer, user_w_iter, bias;  // f32
        dnnl::lstm_forward::primitive_desc inference_pd, training_pd;
        dnnl::lstm_backward::primitive_desc backward_pd;
        dnnl::lstm_forward inference, training;
        dnnl::lstm_backward backward;
    };

    Primitives &primitives(int64_t T, int64_t B) {
        auto it = cache_.find({T, B});
        if (it != cache_.end()) return it->second;
        const memory::dim n = n_, m = m_, G = kLstmGates;
        Primitives p;
        auto act = [&](const memory::dims &dims, tag t) { return memory::desc(dims, act_, t); };
        p.layer_in = act({T, B, n}, tag::tnc), p.layer_out = act({T, B, m}, tag::tnc), p.state = act({1, 1, B, m}, tag::ldnc);
        p.d_layer_in = f32({T, B, n}, tag::tnc), p.d_layer_out = f32({T, B, m}, tag::tnc), p.d_state = f32({1, 1, B, m}, tag::ldnc);
        p.state_c = p.d_state;
        p.user_w_layer = f32({1, 1, n, G, m}, tag::ldigo), p.user_w_iter = f32({1, 1, m, G, m}, tag::ldigo);
        p.bias = f32({1, 1, G, m}, tag::ldgo);
        auto any_w_layer = act({1, 1, n, G, m}, tag::any), any_w_iter = act({1, 1, m, G, m}, tag::any);
        auto any_dw_layer = f32({1, 1, n, G, m}, tag::any), any_dw_iter = f32({1, 1, m, G, m}, tag::any);
        const auto dir = dnnl::rnn_direction::unidirectional_left2right;
        auto forward = [&](dnnl::prop_kind kind) {
            dnnl::lstm_forward::desc d(kind, dir, p.layer_in, p.state, p.state_c, any_w_layer, any_w_iter, p.bias,
                                       p.layer_out, p.state, p.state_c);
            return dnnl::lstm_forward::primitive_desc(d, engine_);
        };
        run([&] {
            p.inference_pd = forward(dnnl::prop_kind::forward_inference);
            p.training_pd = forward(dnnl::prop_kind::forward_training);
            dnnl::lstm_backward::desc d(dnnl::prop_kind::backward, dir, p.layer_in, p.state, p.state_c, any_w_layer,
                                        any_w_iter, p.bias, p.layer_out, p.state, p.state_c, p.d_layer_in, p.d_state,
                                        p.state_c, any_dw_layer, any_dw_iter, p.bias, p.d_layer_out, p.d_state, p.state_c);
            p.backward_pd = dnnl::lstm_backward::primitive_desc(d, engine_, p.training_pd);
            p.inference = dnnl::lstm_forward(p.inference_pd);
            p.training = dnnl::lstm_forward(p.training_pd);
            p.backward = dnnl::lstm_backward(p.backward_pd);
        });
        return cache_.emplace(std::make_pair(T, B), std::move(p)).first->second;
    }

    template <class F>
    void run(F &&f) {
        try {
            f();
            stream_.wait();
        } catch (const dnnl::error &e) {
            fail("lstm-onednn: oneDNN: ", e.what());
        }
    }

    memory wrap(const memory::desc &d, const Tensor<float> &t) { return onednn::wrap(d, engine_, t.data.data()); }
    bool bf16() const { return act_ == memory::data_type::bf16; }
    // The f32 tensor t (of layout user) as the primitive reads it (layout want): t itself (f32), or converted into
    // `held` (held_memory).
    memory activations(const memory::desc &want, const memory::desc &user, const Tensor<float> &t, memory &held) {
        if (!bf16()) return wrap(want, t);
        memory mem = held_memory(held, want);
        memory from = wrap(user, t);
        dnnl::reorder(from, mem).execute(stream_, from, mem);
        return mem;
    }
    // Where the primitive writes an output of f32 tensor t: t itself (f32), or a bf16 memory as activations'.
    memory outputs(const memory::desc &want, const Tensor<float> &t, memory &held) {
        if (!bf16()) return wrap(want, t);
        return held_memory(held, want);
    }
    void to_f32(const memory &from, const memory::desc &user, Tensor<float> &t) {
        memory to = wrap(user, t);
        dnnl::reorder(from, to).execute(stream_, const_cast<memory &>(from), to);
    }
    // `held` as a memory of layout d, allocated only when it has another (a memory kept across calls: fresh
    // allocations cost page faults, expensive in a VM).
    memory &held_memory(memory &held, const memory::desc &d) {
        if (!held || held.get_desc() != d) held = memory(d, engine_);
        return held;
    }
    memory &scratch(const memory::desc &d, int slot) { return held_memory(scratch_[slot], d); }
    // `user` as the primitive wants it: itself, or reordered into the scratch memory of `slot`.
    memory prepared(const memory::desc &want, const memory &user, int slot) {
        if (want == user.get_desc()) return user;
        memory &mem = scratch(want, slot);
        dnnl::reorder(user, mem).execute(stream_, const_cast<memory &>(user), mem);
        return mem;
    }
    static void zero(memory &d) {
        std::fill_n(static_cast<float *>(d.get_data_handle()), d.get_desc().get_size() / sizeof(float), 0.0f);
    }
    // grad += d, d reordered into our layout (user_desc) first when the primitive chose another.
    void accumulate(const memory &d, const memory::desc &user_desc, Tensor<float> &grad, Tensor<float> &plain) {
        ensure_shape(plain, grad.shape);
        memory user = wrap(user_desc, plain);
        dnnl::reorder(d, user).execute(stream_, const_cast<memory &>(d), user);
        stream_.wait();
        for (size_t i = 0; i < plain.size(); i++) grad.data[i] += plain.data[i];
    }

    dnnl::engine engine_;
    dnnl::stream stream_;
    memory::data_type act_;  // of x, h, y and the weights the primitives read
    std::map<std::pair<int64_t, int64_t>, Primitives> cache_;
    // Slots: weights for inference (0, 1), training (2, 3), backward (4, 5); weight gradients (6, 7); bf16 inference's
    // x, h0, y, h_T (8-11).
    memory scratch_[12];
    Tensor<float> plain_[2];  // weight gradients in our layout
};

}  // namespace

std::unique_ptr<nn::Layer> make_lstm_onednn_layer(const ModelConfig &cfg, int64_t index) {
    require_environment_target("lstm-onednn", cfg.target);
    return std::make_unique<LstmOnednnLayer>(cfg, index);
}
}  // namespace qrnn
