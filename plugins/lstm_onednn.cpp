// Model plugin "lstm-onednn": oneDNN 2.x lstm_forward (op-descriptor API), forward inference, f32. The
// weights are given in our layout (ldigo = [n][4][m], gate order i,f,g,o as ours) and reordered once, at
// build time, into the format the primitive picks (format_tag::any); the timed forward is the primitive.
#include <dnnl.hpp>

#include "core/error.h"
#include "plugins/lstm_model.h"

namespace qrnn {
namespace {
using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

class LstmOnednn : public LstmModel {
public:
    explicit LstmOnednn(const ModelConfig &cfg) : LstmModel(cfg), engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
        const dnnl::memory::dim T = cfg.seq, B = cfg.batch, n = cfg.input, m = cfg.hidden, G = kLstmGates;
        auto md = [](dnnl::memory::dims dims, tag t) { return dnnl::memory::desc(dims, dt::f32, t); };
        auto src_layer = md({T, B, n}, tag::tnc), dst_layer = md({T, B, m}, tag::tnc);
        auto state = md({1, 1, B, m}, tag::ldnc);
        auto user_w_layer = md({1, 1, n, G, m}, tag::ldigo), user_w_iter = md({1, 1, m, G, m}, tag::ldigo);
        auto bias = md({1, 1, G, m}, tag::ldgo);
        auto any_w_layer = md({1, 1, n, G, m}, tag::any), any_w_iter = md({1, 1, m, G, m}, tag::any);

        dnnl::lstm_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::rnn_direction::unidirectional_left2right,
                                      src_layer, state, state, any_w_layer, any_w_iter, bias, dst_layer, state, state);
        dnnl::lstm_forward::primitive_desc pd(desc, engine_);
        primitive_ = dnnl::lstm_forward(pd);

        auto wrap = [&](const dnnl::memory::desc &d, Tensor<float> &t) { return dnnl::memory(d, engine_, t.data.data()); };
        auto prepared = [&](const dnnl::memory::desc &want, dnnl::memory user) {
            if (want == user.get_desc()) return user;
            dnnl::memory mem(want, engine_);
            dnnl::reorder(user, mem).execute(stream_, user, mem);
            return mem;
        };
        w_layer_ = prepared(pd.weights_layer_desc(), wrap(user_w_layer, data_.params.w_input));
        w_iter_ = prepared(pd.weights_iter_desc(), wrap(user_w_iter, data_.params.w_recurrent));
        stream_.wait();
        args_ = {{DNNL_ARG_SRC_LAYER, wrap(src_layer, data_.x)},
                 {DNNL_ARG_SRC_ITER, wrap(state, data_.h0)},
                 {DNNL_ARG_SRC_ITER_C, wrap(state, data_.c0)},
                 {DNNL_ARG_WEIGHTS_LAYER, w_layer_},
                 {DNNL_ARG_WEIGHTS_ITER, w_iter_},
                 {DNNL_ARG_BIAS, wrap(bias, data_.params.bias)},
                 {DNNL_ARG_DST_LAYER, wrap(dst_layer, h_)},
                 {DNNL_ARG_DST_ITER, wrap(state, h_T_)},
                 {DNNL_ARG_DST_ITER_C, wrap(state, c_T_)}};
        if (pd.workspace_desc().get_size() > 0) fail("lstm-onednn: inference primitive unexpectedly needs a workspace");
    }

    void forward() override {
        primitive_.execute(stream_, args_);
        stream_.wait();
    }

private:
    dnnl::engine engine_;
    dnnl::stream stream_;
    dnnl::lstm_forward primitive_;
    dnnl::memory w_layer_, w_iter_;
    std::unordered_map<int, dnnl::memory> args_;
};

const bool registered = [] {
    register_lstm_model("lstm-onednn", "LSTM by oneDNN 2.x lstm_forward (weights reordered to its format)", {"cpu"},
                        nullptr, [](const ModelConfig &cfg) -> std::unique_ptr<Model> {
                            try {
                                return std::make_unique<LstmOnednn>(cfg);
                            } catch (const dnnl::error &e) {
                                fail("lstm-onednn: oneDNN: ", e.what());
                            }
                        });
    return true;
}();
}  // namespace
}  // namespace qrnn
