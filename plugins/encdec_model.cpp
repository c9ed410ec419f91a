// Model plugins "encdec" (the paper's encoder-decoder QRNN with attention) and "encdec-noattn" (the same
// without attention: the last decoder layer's h is the output), nn/encoder_decoder.h, for `qrnn run`.
// Shape: source and target both --seq long and --input wide, --hidden, --layers (encoder and decoder each),
// --window, --pooling; source lengths vary over the batch (seeded, in [ceil(seq/2), seq]), masks with
// --mode train. --pass inference times the forward (teacher forcing), --pass training forward + backward of
// loss = sum(dout * out) with a seeded dout; --verify compares the output (and every gradient) with
// reference/encoder_decoder.h.
#include "core/error.h"
#include "core/streams.h"
#include "nn/encoder_decoder.h"
#include "plugins/model.h"
#include "runtime/seeded_fill.h"
#include "reference/encoder_decoder.h"
#include "runtime/compare.h"

namespace qrnn {
namespace {
constexpr uint32_t kStream = streams::kEncDecBenchInputs;  // source, target, dout, lengths

class EncDecModel : public Model {
public:
    EncDecModel(const ModelConfig &cfg, bool attention, bool training)
        : cfg_(make_encdec_config(cfg, cfg.seq, cfg.input, attention)), training_(training), model_(cfg_) {
        const int64_t S = cfg.seq, T = cfg.seq, B = cfg.batch;
        source_ = Tensor<float>({S, B, cfg.input});
        target_ = Tensor<float>({T, B, cfg.input});
        dout_ = Tensor<float>({T, B, cfg.hidden});
        seeded_fill(source_, cfg.seed, kStream, 1.0);
        seeded_fill(target_, cfg.seed, kStream + 1, 1.0);
        seeded_fill(dout_, cfg.seed, kStream + 2, 1.0);
        for (int64_t b = 0; b < B; b++) {
            const int64_t shortest = (S + 1) / 2;
            lengths_.push_back(shortest + static_cast<int64_t>(hash_at<uint32_t>(stream_key(cfg.seed, kStream + 3), 0, 0,
                                                                                  static_cast<uint32_t>(b)) %
                                                               static_cast<uint32_t>(S - shortest + 1)));
        }
        model_.set_stochastic(cfg.stochastic);
    }
    void forward() override {
        if (!training_) {
            model_.forward(source_, lengths_, target_, nullptr);
            return;
        }
        model_.zero_grads();
        model_.forward(source_, lengths_, target_, &tape_);
        model_.backward(tape_, dout_, &dsource_, &dtarget_);
    }
    Comparison verify() override {
        forward();
        const EncDecParams<double> p = convert<double>(model_.parameters());
        const Tensor<double> source = convert<double>(source_), target = convert<double>(target_);
        Tensor<float> out = model_.forward(source_, lengths_, target_, nullptr);
        Comparison c = compare(out, ref::encdec_forward(cfg_, p, source, lengths_, target).out);
        if (!training_) return c;
        ref::EncDecGrads g = ref::encdec_backward(cfg_, p, source, lengths_, target, convert<double>(dout_));
        // Each gradient relative to its own scale; the worst is reported.
        auto worst = [&c](const Tensor<float> &y, const Tensor<double> &r) {
            Comparison d = compare(y, r);
            if (d.rel() > c.rel()) c = d;
        };
        worst(dsource_, g.dsource);
        worst(dtarget_, g.dtarget);
        std::vector<nn::Param> params = model_.params();
        size_t i = 0;
        for (int64_t l = 0; l < cfg_.layers(); l++) {
            for (auto *layers : {&g.params.encoder, &g.params.decoder}) {
                worst(*params[i++].grad, (*layers)[l].weights);
                worst(*params[i++].grad, (*layers)[l].bias);
            }
            worst(*params[i++].grad, g.params.condition[l]);
        }
        if (cfg_.attention) worst(*params[i].grad, g.params.attention);
        return c;
    }
    double flops() const override {
        const double f = model_.flops(cfg_.source_len, cfg_.decoder.seq, cfg_.decoder.batch);
        return training_ ? 3 * f : f;  // backward: two GEMMs of the forward's size per forward GEMM
    }

private:
    EncDecConfig cfg_;
    bool training_;
    nn::EncoderDecoder model_;
    Tensor<float> source_, target_, dout_, dsource_, dtarget_;
    std::vector<int64_t> lengths_;
    nn::EncDecTape tape_;
};

// Encoder and decoder stacks (S = T); besides: the target and, training, dsource and dtarget; V_l and the
// per-sequence bias V_l h~^l per layer, W (with gradients when training); the attention's [T][S][B] scores,
// weights and alpha (and their gradients when training) and its [T][B][m] context, mixed, cell, o and dout
// (and gradients); the encoder's outputs kept for the backward, and transposed in the attention's tape.
MemoryShape encdec_memory_shape(const ModelConfig &cfg) {
    const double T = cfg.seq, B = cfg.batch, n = cfg.input, m = cfg.hidden, L = cfg.layers, G = 4;
    const double grads = cfg.training_pass() ? 2 : 1;
    MemoryShape shape;
    shape.weight_copies = 3;  // nn::Layer: the gradient too
    shape.stacks = 2;
    shape.extra_floats = T * B * n * (cfg.training_pass() ? 3 : 1) + grads * (L * (G * m * m + G * B * m) + 2 * m * m) +
                         (cfg.training_pass() ? 7 : 4) * T * T * B + grads * 5 * T * B * m + (L + 1) * T * B * m;
    return shape;
}

void validate(const ModelConfig &cfg) {
    cfg.pooling_variant().require_backward();
    if (!cfg.target.empty() && parse_target(cfg.target).has_gpu_feature())
        fail("model '", cfg.model, "' runs on CPU targets only so far");
}

const bool encdec_model_registered = [] {
    for (bool attention : {true, false}) {
        ModelPlugin p;
        p.name = attention ? "encdec" : "encdec-noattn";
        p.description = attention ? "encoder-decoder QRNN with attention (the paper's translation model; S = T = seq)"
                                  : "encoder-decoder QRNN without attention (conditioning on the encoder only)";
        p.options = {"pooling", "window", "layers", "mode", "zoneout", "dropout", "seed", "schedule"};
        p.targets = {"cpu"};
        p.validate = validate;
        p.memory = encdec_memory_shape;
        p.build = [attention](const ModelConfig &cfg, const RunOptions &) -> std::unique_ptr<Model> {
            return std::make_unique<EncDecModel>(cfg, attention, false);
        };
        p.features = attention ? std::vector<std::string>{"encoder-decoder", "attention", "variable-length"}
                               : std::vector<std::string>{"encoder-decoder", "variable-length"};  // source lengths
        p.build_training = [attention](const ModelConfig &cfg, const RunOptions &) -> std::unique_ptr<Model> {
            return std::make_unique<EncDecModel>(cfg, attention, true);
        };
        register_model(p);
    }
    return true;
}();
}  // namespace
}  // namespace qrnn
