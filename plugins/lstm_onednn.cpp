// Model plugin "lstm-onednn": oneDNN 2.x lstm_forward (op-descriptor API), forward inference, f32 or bf16, one
// primitive per layer. The weights are given in our layout (ldigo = [n][4][m], gate order i,f,g,o as ours)
// and reordered once, at build time, into the format the primitive picks (format_tag::any); the timed
// forward is the primitives. bf16 (--precision bf16): the input, the weights, h and the layers' outputs in bf16
// (converted once, untimed: the input and h0 at build, the outputs when fetched), c and the bias in f32; only where
// oneDNN has more than its reference implementation (a CPU with avx512_bf16).
#include <dnnl.hpp>
#include <cstdlib>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/precision.h"
#include "plugins/lstm_model.h"
#include "plugins/onednn_memory.h"

namespace qrnn {
namespace {
using onednn::f32;
using onednn::tag;

using dnnl::memory;

// The inference primitive of one layer (T, B, n -> m), its activations and h in `act` (f32 or bf16).
dnnl::lstm_forward::primitive_desc lstm_inference_pd(const dnnl::engine &engine, memory::dim T, memory::dim B,
                                                     memory::dim n, memory::dim m, memory::data_type act) {
    const memory::dim G = kLstmGates;
    auto d = [](const memory::dims &dims, memory::data_type type, tag t) { return memory::desc(dims, type, t); };
    dnnl::lstm_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::rnn_direction::unidirectional_left2right, d({T, B, n}, act, tag::tnc),
        d({1, 1, B, m}, act, tag::ldnc), f32({1, 1, B, m}, tag::ldnc), d({1, 1, n, G, m}, act, tag::any),
        d({1, 1, m, G, m}, act, tag::any), f32({1, 1, G, m}, tag::ldgo), d({T, B, m}, act, tag::tnc),
        d({1, 1, B, m}, act, tag::ldnc), f32({1, 1, B, m}, tag::ldnc));
    return dnnl::lstm_forward::primitive_desc(desc, engine);
}

// Why oneDNN's bf16 LSTM cannot be the baseline here ("" if it can): only its reference implementation on this CPU
// (or under DNNL_MAX_CPU_ISA), whose time would flatter any comparison, or none. QRNN_ONEDNN_BF16_ANY_IMPL=1 accepts
// the reference implementation: for checking the bf16 path's results on any CPU (tests), never for timing.
std::string bf16_lstm_unavailable(const ModelConfig &cfg) {
    if (cfg.precision == "f32") return "";
    const char *any = std::getenv("QRNN_ONEDNN_BF16_ANY_IMPL");
    if (any && std::string(any) == "1") return "";
    static const std::string why = [] {
        try {
            dnnl::engine engine(dnnl::engine::kind::cpu, 0);
            const std::string impl = lstm_inference_pd(engine, 4, 2, 32, 32, memory::data_type::bf16).impl_info_str();
            return impl.rfind("ref", 0) == 0 ? "oneDNN has only its reference bf16 LSTM on this CPU (no avx512_bf16)" : "";
        } catch (const dnnl::error &) {
            return "oneDNN has no bf16 LSTM on this CPU";
        }
    }();
    return why;
}

class LstmOnednn : public LstmModel {
public:
    explicit LstmOnednn(const ModelConfig &cfg)
        : LstmModel(cfg), engine_(dnnl::engine::kind::cpu, 0), stream_(engine_),
          act_(parse_precision(cfg.precision) == Precision::bf16 ? memory::data_type::bf16 : memory::data_type::f32) {
        memory input = converted({cfg.seq, cfg.batch, cfg.input}, tag::tnc, data_.x.data.data());
        for (int64_t l = 0; l < cfg.layers; l++) input = add_layer(l, input);
        stream_.wait();
    }

    void forward() override {
        for (auto &[primitive, args] : layers_) primitive.execute(stream_, args);
        stream_.wait();
    }

private:
    // f32 data as a memory of the activations' type: itself, or a converted copy (made now).
    memory converted(const memory::dims &dims, tag t, const float *data) {
        memory user = onednn::wrap(f32(dims, t), engine_, data);
        return onednn::prepared(memory::desc(dims, act_, t), user, engine_, stream_);
    }

    // The outputs of the last forward() in h_ and h_T_ (bf16: converted; f32: written there already).
    void fetch_outputs() override {
        if (act_ == memory::data_type::f32) return;
        const memory::dim T = cfg_.seq, B = cfg_.batch, m = cfg_.hidden;
        auto to_f32 = [&](const memory &from, const memory::dims &dims, tag t, float *to) {
            memory dst = onednn::wrap(f32(dims, t), engine_, to);
            dnnl::reorder(from, dst).execute(stream_, const_cast<memory &>(from), dst);
        };
        to_f32(layers_.back().second.at(DNNL_ARG_DST_LAYER), {T, B, m}, tag::tnc, h_.data.data());
        for (size_t l = 0; l < layers_.size(); l++)
            to_f32(layers_[l].second.at(DNNL_ARG_DST_ITER), {1, 1, B, m}, tag::ldnc, h_T_.data.data() + l * B * m);
        stream_.wait();
    }

    // One lstm_forward primitive per layer (layer 0's input width differs), reading `input`; weights reordered here,
    // once. Returns its output (f32: into h_ for the last layer).
    memory add_layer(int64_t l, const memory &input) {
        const memory::dim T = cfg_.seq, B = cfg_.batch, n = cfg_.layer_input(l), m = cfg_.hidden, G = kLstmGates;
        dnnl::lstm_forward::primitive_desc pd = lstm_inference_pd(engine_, T, B, n, m, act_);
        if (pd.workspace_desc().get_size() > 0) fail("lstm-onednn: inference primitive unexpectedly needs a workspace");
        auto wrap = [&](const memory::desc &d, const float *data) { return onednn::wrap(d, engine_, data); };
        auto prepared = [&](const memory::desc &want, const memory &user) { return onednn::prepared(want, user, engine_, stream_); };
        LstmParams<float> &p = data_.layers[l];
        const size_t state_offset = static_cast<size_t>(l * B * m);
        const bool f32_last = act_ == memory::data_type::f32 && l == cfg_.layers - 1;
        memory output = f32_last ? wrap(pd.dst_layer_desc(), h_.data.data()) : memory(pd.dst_layer_desc(), engine_);
        memory h_T = act_ == memory::data_type::f32 ? wrap(pd.dst_iter_desc(), h_T_.data.data() + state_offset)
                                                    : memory(pd.dst_iter_desc(), engine_);
        std::unordered_map<int, memory> args{
            {DNNL_ARG_SRC_LAYER, input},
            {DNNL_ARG_SRC_ITER, converted({1, 1, B, m}, tag::ldnc, data_.h0.data.data() + state_offset)},
            {DNNL_ARG_SRC_ITER_C, wrap(f32({1, 1, B, m}, tag::ldnc), data_.c0.data.data() + state_offset)},
            {DNNL_ARG_WEIGHTS_LAYER, prepared(pd.weights_layer_desc(), wrap(f32({1, 1, n, G, m}, tag::ldigo), p.w_input.data.data()))},
            {DNNL_ARG_WEIGHTS_ITER, prepared(pd.weights_iter_desc(), wrap(f32({1, 1, m, G, m}, tag::ldigo), p.w_recurrent.data.data()))},
            {DNNL_ARG_BIAS, wrap(f32({1, 1, G, m}, tag::ldgo), p.bias.data.data())},
            {DNNL_ARG_DST_LAYER, output},
            {DNNL_ARG_DST_ITER, h_T},
            {DNNL_ARG_DST_ITER_C, wrap(f32({1, 1, B, m}, tag::ldnc), c_T_.data.data() + state_offset)}};
        layers_.emplace_back(dnnl::lstm_forward(pd), std::move(args));
        return output;
    }

    dnnl::engine engine_;
    dnnl::stream stream_;
    memory::data_type act_;  // of the input, h, the weights and the outputs
    std::vector<std::pair<dnnl::lstm_forward, std::unordered_map<int, memory>>> layers_;
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
                        make_lstm_onednn_layer, LstmBf16{bf16_lstm_unavailable, kBf16UnroundedTolerance});
    return true;
}();
}  // namespace
}  // namespace qrnn
