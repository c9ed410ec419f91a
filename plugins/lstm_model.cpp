#include "plugins/lstm_model.h"

#include <cmath>

#include "core/streams.h"
#include "runtime/seeded_fill.h"
#include "reference/baselines.h"
#include "runtime/params.h"

namespace qrnn {
namespace {
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
        ref::lstm_stack_forward(convert<double>(data_.x), layers, convert<double>(data_.h0), convert<double>(data_.c0));
    Comparison cmp = compare(h_, ref.h);
    cmp.merge(compare(h_T_, ref.h_T));
    cmp.merge(compare(c_T_, ref.c_T));
    return cmp;
}

void register_lstm_model(const std::string &name, const std::string &description, std::vector<std::string> targets,
                         std::function<std::string()> unavailable,
                         std::function<std::unique_ptr<Model>(const ModelConfig &)> build) {
    register_model({name, description, {"layers"}, std::move(targets), std::move(unavailable), require_eval,
                    [build](const ModelConfig &cfg, const RunOptions &) { return build(cfg); }});
}

}  // namespace qrnn
