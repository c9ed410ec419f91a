#include "plugins/lstm_model.h"

#include <cmath>

#include "plugins/seeded_fill.h"
#include "reference/baselines.h"
#include "runtime/params.h"

namespace qrnn {
namespace {
LstmParams<double> to_double(const LstmParams<float> &p) {
    return {convert<double>(p.w_input), convert<double>(p.w_recurrent), convert<double>(p.bias)};
}
}  // namespace

LstmData init_lstm_data(const ModelConfig &cfg) {
    const int64_t n = cfg.input, m = cfg.hidden, B = cfg.batch, G = kLstmGates;
    LstmData d{init_input(cfg),
               {Tensor<float>({n, G, m}), Tensor<float>({m, G, m}), Tensor<float>({G, m})},
               Tensor<float>({B, m}),
               Tensor<float>({B, m})};
    const double bound = 1.0 / std::sqrt(static_cast<double>(m));
    seeded_fill(d.params.w_input, cfg.seed, 0x20000u + 0, bound);
    seeded_fill(d.params.w_recurrent, cfg.seed, 0x20000u + 1, bound);
    seeded_fill(d.params.bias, cfg.seed, 0x20000u + 2, bound);
    seeded_fill(d.h0, cfg.seed, 0x20003u, 0.5);
    seeded_fill(d.c0, cfg.seed, 0x20004u, 0.5);
    return d;
}

double lstm_flops(const ModelConfig &cfg) {
    const double steps = static_cast<double>(cfg.seq) * cfg.batch;
    return steps * (2.0 * kLstmGates * cfg.hidden * (cfg.input + cfg.hidden) + 8.0 * cfg.hidden);
}

LstmModel::LstmModel(const ModelConfig &cfg)
    : cfg_(cfg), data_(init_lstm_data(cfg)), h_({cfg.seq, cfg.batch, cfg.hidden}), h_T_({cfg.batch, cfg.hidden}),
      c_T_({cfg.batch, cfg.hidden}) {}

Comparison LstmModel::verify() {
    forward();
    fetch_outputs();
    ref::LstmOutput ref = ref::lstm_forward(convert<double>(data_.x), to_double(data_.params),
                                            convert<double>(data_.h0), convert<double>(data_.c0));
    Comparison cmp = compare(h_, ref.h);
    cmp.merge(compare(h_T_, ref.h_T));
    cmp.merge(compare(c_T_, ref.c_T));
    return cmp;
}

void register_lstm_model(const std::string &name, const std::string &description, std::vector<std::string> targets,
                         std::function<std::string()> unavailable,
                         std::function<std::unique_ptr<Model>(const ModelConfig &)> build) {
    register_model({name, description, {}, std::move(targets), std::move(unavailable), require_single_layer_eval,
                    [build](const ModelConfig &cfg, const RunOptions &) { return build(cfg); }});
}

}  // namespace qrnn
