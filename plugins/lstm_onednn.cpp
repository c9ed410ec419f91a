// Model plugin "lstm-onednn": oneDNN 2.x lstm_forward (op-descriptor API), forward inference, f32, one
// primitive per layer. The weights are given in our layout (ldigo = [n][4][m], gate order i,f,g,o as ours)
// and reordered once, at build time, into the format the primitive picks (format_tag::any); the timed
// forward is the primitives.
#include <dnnl.hpp>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.h"
#include "plugins/lstm_model.h"
#include "plugins/onednn_memory.h"

namespace qrnn {
namespace {
using onednn::f32;
using onednn::tag;

class LstmOnednn : public LstmModel {
public:
    explicit LstmOnednn(const ModelConfig &cfg) : LstmModel(cfg), engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
        if (cfg.layers > 1) between_[0] = between_[1] = Tensor<float>({cfg.seq, cfg.batch, cfg.hidden});
        const Tensor<float> *input = &data_.x;
        for (int64_t l = 0; l < cfg.layers; l++) {
            Tensor<float> &output = l == cfg.layers - 1 ? h_ : between_[l % 2];
            add_layer(l, *input, output);
            input = &output;
        }
        stream_.wait();
    }

    void forward() override {
        for (auto &[primitive, args] : layers_) primitive.execute(stream_, args);
        stream_.wait();
    }

private:
    // One lstm_forward primitive per layer (layer 0's input width differs); weights reordered here, once.
    void add_layer(int64_t l, const Tensor<float> &input, Tensor<float> &output) {
        const dnnl::memory::dim T = cfg_.seq, B = cfg_.batch, n = input.dim(2), m = cfg_.hidden, G = kLstmGates;
        auto src_layer = f32({T, B, n}, tag::tnc), dst_layer = f32({T, B, m}, tag::tnc);
        auto state = f32({1, 1, B, m}, tag::ldnc);
        auto user_w_layer = f32({1, 1, n, G, m}, tag::ldigo), user_w_iter = f32({1, 1, m, G, m}, tag::ldigo);
        auto bias = f32({1, 1, G, m}, tag::ldgo);
        auto any_w_layer = f32({1, 1, n, G, m}, tag::any), any_w_iter = f32({1, 1, m, G, m}, tag::any);

        dnnl::lstm_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::rnn_direction::unidirectional_left2right,
                                      src_layer, state, state, any_w_layer, any_w_iter, bias, dst_layer, state, state);
        dnnl::lstm_forward::primitive_desc pd(desc, engine_);
        if (pd.workspace_desc().get_size() > 0) fail("lstm-onednn: inference primitive unexpectedly needs a workspace");

        auto wrap = [&](const dnnl::memory::desc &d, const float *data) { return onednn::wrap(d, engine_, data); };
        auto prepared = [&](const dnnl::memory::desc &want, const dnnl::memory &user) {
            return onednn::prepared(want, user, engine_, stream_);
        };
        LstmParams<float> &p = data_.layers[l];
        const size_t state_offset = static_cast<size_t>(l * B * m);
        std::unordered_map<int, dnnl::memory> args{
            {DNNL_ARG_SRC_LAYER, wrap(src_layer, input.data.data())},
            {DNNL_ARG_SRC_ITER, wrap(state, data_.h0.data.data() + state_offset)},
            {DNNL_ARG_SRC_ITER_C, wrap(state, data_.c0.data.data() + state_offset)},
            {DNNL_ARG_WEIGHTS_LAYER, prepared(pd.weights_layer_desc(), wrap(user_w_layer, p.w_input.data.data()))},
            {DNNL_ARG_WEIGHTS_ITER, prepared(pd.weights_iter_desc(), wrap(user_w_iter, p.w_recurrent.data.data()))},
            {DNNL_ARG_BIAS, wrap(bias, p.bias.data.data())},
            {DNNL_ARG_DST_LAYER, wrap(dst_layer, output.data.data())},
            {DNNL_ARG_DST_ITER, wrap(state, h_T_.data.data() + state_offset)},
            {DNNL_ARG_DST_ITER_C, wrap(state, c_T_.data.data() + state_offset)}};
        layers_.emplace_back(dnnl::lstm_forward(pd), std::move(args));
    }

    dnnl::engine engine_;
    dnnl::stream stream_;
    std::vector<std::pair<dnnl::lstm_forward, std::unordered_map<int, dnnl::memory>>> layers_;
    Tensor<float> between_[2];  // outputs of the layers before the last
};

const bool lstm_onednn_registered = [] {
    register_lstm_model("lstm-onednn", "LSTM by oneDNN 2.x lstm_forward (weights reordered to its format)", {"cpu"},
                        nullptr, [](const ModelConfig &cfg) -> std::unique_ptr<Model> {
                            try {
                                return std::make_unique<LstmOnednn>(cfg);
                            } catch (const dnnl::error &e) {
                                fail("lstm-onednn: oneDNN: ", e.what());
                            }
                        },
                        make_lstm_onednn_layer);
    return true;
}();
}  // namespace
}  // namespace qrnn
