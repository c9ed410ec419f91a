#include "tests/support/encdec_problem.h"

#include <algorithm>

#include "nn/encoder_decoder.h"
#include "runtime/compare.h"
#include "tests/support/finite_differences.h"

namespace qrnn::test {

const std::vector<EncDecShape> &encdec_shapes() {
    static const std::vector<EncDecShape> shapes = {
        {1, 1, 1, 1, 1, 1, 1, 1, {1}},              // every size 1
        {3, 2, 2, 3, 2, 5, 3, 2, {3, 1}},           // k > T, 2 layers, a length-1 source
        {4, 5, 3, 2, 3, 3, 2, 1, {4, 2, 3}},        // T > S, variable lengths
        {2, 3, 1, 1, 4, 7, 4, 2, {2}},              // B = 1, k > S and T, odd width
    };
    return shapes;
}

EncDecProblem make_encdec_problem(const EncDecShape &s, const std::string &pooling, bool attention, bool stochastic) {
    ModelConfig base;
    base.pooling = pooling, base.window = s.k, base.batch = s.B, base.seq = s.T, base.input = s.n_tgt;
    base.hidden = s.m, base.layers = s.L, base.seed = 11;
    base.stochastic = stochastic, base.zoneout = stochastic ? 0.3 : 0, base.dropout = stochastic ? 0.25 : 0;
    EncDecProblem p;
    p.cfg = make_encdec_config(base, s.S, s.n_src, attention);
    // Larger than the default initialisation so that the attention is far from uniform.
    p.params = convert<double>(init_encdec_params(p.cfg));
    for (auto &v : p.params.condition)
        for (auto &e : v.data) e *= 2;
    for (auto &e : p.params.attention.data) e *= 2;
    p.source = seeded_tensor({s.S, s.B, s.n_src}, 5, 1, 1.5);
    p.target = seeded_tensor({s.T, s.B, s.n_tgt}, 5, 2, 1.5);
    p.dout = seeded_tensor({s.T, s.B, s.m}, 5, 3);
    p.lengths = s.lengths;
    return p;
}

double encdec_loss(const EncDecProblem &p) {
    return dot(p.dout, ref::encdec_forward(p.cfg, p.params, p.source, p.lengths, p.target).out);
}

GradPairs encdec_grad_pairs(EncDecProblem &p, const ref::EncDecGrads &g) {
    GradPairs out{{"source", {&p.source, &g.dsource}}, {"target", {&p.target, &g.dtarget}}};
    for (size_t l = 0; l < p.params.encoder.size(); l++) {
        const std::string e = "encoder_" + std::to_string(l), d = "decoder_" + std::to_string(l);
        out.push_back({e + "/weights", {&p.params.encoder[l].weights, &g.params.encoder[l].weights}});
        out.push_back({e + "/bias", {&p.params.encoder[l].bias, &g.params.encoder[l].bias}});
        out.push_back({d + "/weights", {&p.params.decoder[l].weights, &g.params.decoder[l].weights}});
        out.push_back({d + "/bias", {&p.params.decoder[l].bias, &g.params.decoder[l].bias}});
        out.push_back({"condition_" + std::to_string(l), {&p.params.condition[l], &g.params.condition[l]}});
    }
    if (p.cfg.attention) out.push_back({"attention", {&p.params.attention, &g.params.attention}});
    return out;
}

namespace {
double rel_err(const Tensor<float> &a, const Tensor<double> &b) { return compare(a, b).rel(); }
}  // namespace

void Worst::add(const std::string &n, double r) {
    if (!(r <= rel)) rel = r, name = n;
}

// The float model on the problem's parameters vs the reference: output and every gradient of sum(dout * out).
Worst float_vs_reference(EncDecProblem &p, const std::string &target) {
    p.cfg.encoder.target = p.cfg.decoder.target = target;
    nn::EncoderDecoder model(p.cfg);
    model.set_parameters(convert<float>(p.params));
    model.set_stochastic(p.cfg.encoder.stochastic);
    nn::EncDecTape tape;
    const Tensor<float> source = convert<float>(p.source), target_in = convert<float>(p.target);
    Tensor<float> out = model.forward(source, p.lengths, target_in, &tape);
    Tensor<float> dsource, dtarget;
    model.zero_grads();
    model.backward(tape, convert<float>(p.dout), &dsource, &dtarget);

    ref::EncDecTrace tr = ref::encdec_forward(p.cfg, p.params, p.source, p.lengths, p.target);
    ref::EncDecGrads g = ref::encdec_backward(p.cfg, p.params, p.source, p.lengths, p.target, p.dout);
    Worst w;
    w.add("out", rel_err(out, tr.out));
    if (p.cfg.attention) w.add("alpha", rel_err(tape.attention.alpha, tr.attention.alpha));
    w.add("dsource", rel_err(dsource, g.dsource));
    w.add("dtarget", rel_err(dtarget, g.dtarget));
    GradPairs pairs = encdec_grad_pairs(p, g);
    std::vector<nn::Param> params = model.params();
    for (auto &pair : pairs) {
        if (pair.first == "source" || pair.first == "target") continue;
        auto it = std::find_if(params.begin(), params.end(), [&](const nn::Param &q) { return q.name == pair.first; });
        if (it == params.end()) {
            w.add("missing " + pair.first, 1e30);
            continue;
        }
        w.add(pair.first, rel_err(*it->grad, *pair.second.second));
    }
    return w;
}
}  // namespace qrnn::test
