#include "tests/support/seq_check.h"

#include "nn/qrnn_layer.h"
#include "nn/seq_layer.h"
#include "reference/qrnn_seq.h"
#include "runtime/compare.h"
#include "tests/support/finite_differences.h"

namespace qrnn::test {

const SeqShape kSeqShapes[6] = {{1, 1, 1, 1, 1, 1}, {1, 2, 3, 5, 3, 2}, {4, 1, 5, 3, 2, 3},
                                {5, 3, 2, 7, 4, 2}, {9, 4, 20, 33, 2, 2}, {6, 3, 9, 64, 2, 2}};

ModelConfig seq_config(const SeqShape &s, const std::string &model, const std::string &schedule) {
    ModelConfig c;
    c.model = model, c.pooling = "fo", c.schedule = schedule;
    c.seq = s.T, c.batch = s.B, c.input = s.n, c.hidden = s.m, c.window = s.k, c.layers = s.L;
    c.stochastic = true, c.zoneout = 0.3, c.dropout = 0.25, c.seed = 9;
    return c;
}

std::vector<int32_t> seq_test_lengths(int64_t T, int64_t B) {
    std::vector<int32_t> lengths(B);
    for (int64_t b = 0; b < B; b++) lengths[b] = static_cast<int32_t>(b == 0 ? T : b == 1 ? 1 : 1 + (b * 5) % T);
    return lengths;
}

// The Halide layer stack against the reference stack: output and every gradient.
double seq_halide_vs_reference(const ModelConfig &cfg, std::string &worst, const std::vector<int32_t> *reference_lengths,
                               const std::string &reference_precision) {
    nn::LayerStack stack(cfg);
    const std::vector<int32_t> lengths = seq_test_lengths(cfg.seq, cfg.batch);
    nn::set_stack_lengths(stack, lengths);
    const SeqOptions options = nn::seq_model_options(cfg.model);
    std::vector<nn::State> states = stack.initial_state(cfg.batch);
    std::vector<LayerParams<double>> params;
    std::vector<LayerState<double>> ref_states;
    for (size_t l = 0; l < stack.size(); l++) {
        const int64_t time = options.directions == 1 ? 5 : 0;
        states[l].time = time;
        for (size_t i = 0; i < states[l].tensors.size(); i++)
            if (states[l].names[i] != "c_reverse") {
                Tensor<double> v = seeded_tensor(states[l].tensors[i].shape, cfg.seed, 40 + 2 * l + i, 0.5);
                states[l].tensors[i] = convert<float>(v);
            }
        auto *layer = dynamic_cast<nn::SeqQrnnLayer *>(&stack.layer(l));
        params.push_back(convert<double>(layer->layer_params()));
        ref_states.push_back(convert<double>(nn::layer_state(states[l])));
    }
    const int64_t time = states[0].time;
    Tensor<float> x = convert<float>(seeded_tensor({cfg.seq, cfg.batch, cfg.input}, cfg.seed, 50));
    Tensor<float> dy = convert<float>(seeded_tensor({cfg.seq, cfg.batch, stack.layer(stack.size() - 1).output_size()}, cfg.seed, 51));
    std::vector<nn::State> initial = states, d_initial;
    stack.zero_grads();
    nn::Tapes tapes = stack.make_tapes();
    Tensor<float> y = stack.forward(x, states, &tapes), dx;
    stack.backward(tapes, dy, nullptr, &dx, &d_initial);

    const Tensor<double> xd = convert<double>(x);
    const std::vector<int32_t> &ref_lengths = reference_lengths ? *reference_lengths : lengths;
    double max_rel = 0;
    auto check = [&](const std::string &what, const Tensor<float> &a, const Tensor<double> &r) {
        Comparison c = compare(a, r);
        double rel = c.finite ? c.rel() : 1e30;
        if (rel > max_rel) max_rel = rel, worst = what;
    };
    ModelConfig ref_cfg = cfg;
    if (!reference_precision.empty()) ref_cfg.precision = reference_precision;
    check("y", y, ref::seq_stack_forward(ref_cfg, options, params, xd, ref_lengths, ref_states, time));
    ref::StackGrads g = ref::seq_stack_backward(ref_cfg, options, params, xd, ref_lengths, ref_states, time, convert<double>(dy));
    check("dx", dx, g.dx);
    for (size_t l = 0; l < stack.size(); l++) {
        const std::string layer = "layer_" + std::to_string(l) + "/";
        auto p = stack.layer(l).params();
        check(layer + "weights", *p[0].grad, g.layers[l].dweights);
        check(layer + "bias", *p[1].grad, g.layers[l].dbias);
        check(layer + "c0", d_initial[l].at("c"), g.layers[l].dc0);
        check(layer + "history", d_initial[l].at("history"), g.layers[l].dhistory);
    }
    return max_rel;
}

}  // namespace qrnn::test
