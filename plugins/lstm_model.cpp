#include "plugins/lstm_model.h"

#include <cmath>

#include "core/streams.h"
#include "plugins/training_model.h"
#include "reference/baselines_backward.h"
#include "runtime/seeded_fill.h"
#include "reference/baselines.h"
#include "runtime/params.h"

namespace qrnn {
namespace {
// --pass training --verify: the output and every gradient against the double reference (loss = sum(dy * y), zero
// final-state gradients), in bf16 with the GEMMs' operands rounded as lstm-halide rounds them; each tensor relative to
// its own scale; the worst is reported.
Comparison verify_lstm_training(const TrainingStep &s) {
    std::vector<LstmParams<double>> layers;
    for (size_t l = 0; l < s.stack.size(); l++) {
        auto p = s.stack.layer(l).params();  // w_input, w_recurrent, bias
        layers.push_back({convert<double>(*p[0].value), convert<double>(*p[1].value), convert<double>(*p[2].value)});
    }
    const Tensor<double> x = convert<double>(s.x), h0 = convert<double>(nn::stacked_state(s.initial, "h")),
                         c0 = convert<double>(nn::stacked_state(s.initial, "c"));
    const Precision precision = parse_precision(s.cfg.precision);
    Comparison worst = compare(s.y, ref::lstm_stack_forward(x, layers, h0, c0, precision).h);
    Tensor<double> zeros(h0.shape);
    ref::LstmStackGrads g = ref::lstm_stack_backward(x, layers, h0, c0, convert<double>(s.dy), zeros, zeros, precision);
    keep_worst(worst, compare(s.dx, g.dx));
    for (size_t l = 0; l < s.stack.size(); l++) {
        auto p = s.stack.layer(l).params();
        keep_worst(worst, compare(*p[0].grad, g.layers[l].w_input));
        keep_worst(worst, compare(*p[1].grad, g.layers[l].w_recurrent));
        keep_worst(worst, compare(*p[2].grad, g.layers[l].bias));
    }
    keep_worst(worst, compare(nn::stacked_state(s.d_initial, "h"), g.dh0));
    keep_worst(worst, compare(nn::stacked_state(s.d_initial, "c"), g.dc0));
    return worst;
}

LstmParams<double> to_double(const LstmParams<float> &p) {
    return {convert<double>(p.w_input), convert<double>(p.w_recurrent), convert<double>(p.bias)};
}
}  // namespace

// Streams: core/streams.h.
LstmParams<float> init_lstm_params(const LstmOptions &opt, int64_t l) {
    const int64_t m = opt.hidden, G = kLstmGates;
    LstmParams<float> p{Tensor<float>({opt.layer_input(l), G, m}), Tensor<float>({m, G, m}), Tensor<float>({G, m})};
    const double bound = 1.0 / std::sqrt(static_cast<double>(m));
    const uint32_t layer = static_cast<uint32_t>(l);
    seeded_fill(p.w_input, opt.seed, streams::lstm_w_input(layer), bound);
    seeded_fill(p.w_recurrent, opt.seed, streams::lstm_w_recurrent(layer), bound);
    seeded_fill(p.bias, opt.seed, streams::lstm_bias(layer), bound);
    return p;
}

LstmParams<float> init_lstm_params(const ModelConfig &cfg, int64_t l) { return init_lstm_params(lstm_options(cfg), l); }

LstmData init_lstm_data(const ModelConfig &cfg) {
    const int64_t m = cfg.hidden, B = cfg.batch, L = cfg.layers;
    LstmData d{init_input(cfg), {}, Tensor<float>({L, B, m}), Tensor<float>({L, B, m})};
    for (int64_t l = 0; l < L; l++) d.layers.push_back(init_lstm_params(cfg, l));
    seeded_fill(d.h0, cfg.seed, streams::kLstmBenchH0, 0.5);
    seeded_fill(d.c0, cfg.seed, streams::kLstmBenchC0, 0.5);
    return d;
}

double lstm_layer_flops(int64_t n, int64_t m) { return 2.0 * kLstmGates * m * (n + m) + 8.0 * m; }

double lstm_flops(const ModelConfig &cfg) {
    const double steps = static_cast<double>(cfg.seq) * cfg.batch;
    double total = 0;
    for (int64_t l = 0; l < cfg.layers; l++)
        total += steps * lstm_layer_flops(cfg.layer_input(l), cfg.hidden);
    return total;
}

LstmModel::LstmModel(const ModelConfig &cfg)
    : cfg_(cfg), data_(init_lstm_data(cfg)), h_({cfg.seq, cfg.batch, cfg.hidden}),
      h_T_({cfg.layers, cfg.batch, cfg.hidden}), c_T_({cfg.layers, cfg.batch, cfg.hidden}) {}

Comparison LstmModel::verify() {
    forward();
    fetch_outputs();
    std::vector<LstmParams<double>> layers;
    for (auto &p : data_.layers) layers.push_back(to_double(p));
    ref::LstmOutput ref =
        ref::lstm_stack_forward(convert<double>(data_.x), layers, convert<double>(data_.h0), convert<double>(data_.c0),
                                parse_precision(cfg_.precision));
    Comparison cmp = compare(h_, ref.h);
    cmp.merge(compare(h_T_, ref.h_T));
    cmp.merge(compare(c_T_, ref.c_T));
    return cmp;
}

void register_lstm_model(const std::string &name, const std::string &description, std::vector<std::string> targets,
                         std::function<std::string()> unavailable,
                         std::function<std::unique_ptr<Model>(const ModelConfig &)> build, nn::LayerFactory layer,
                         std::optional<LstmBf16> bf16) {
    ModelPlugin p;
    p.name = name, p.description = description, p.options = {"layers"};
    if (bf16) {
        p.options.insert(p.options.end(), {"precision", "precision-training"});
        p.unavailable_for = std::move(bf16->unavailable), p.bf16_tolerance = bf16->tolerance;
    }
    p.targets = std::move(targets), p.unavailable = std::move(unavailable);
    p.validate = require_eval;
    p.build = [build](const ModelConfig &cfg, const RunOptions &) { return build(cfg); };
    p.layer = std::move(layer);
    p.verifier = verify_lstm_training;
    register_model(std::move(p));
}

}  // namespace qrnn
