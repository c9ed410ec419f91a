#include "tests/support/gradcheck.h"

#include <cmath>
#include <filesystem>

#include "plugins/loader.h"
#include "runtime/seeded_fill.h"

namespace qrnn::test {
namespace {
Tensor<double> seeded(std::vector<int64_t> shape, uint32_t seed, uint32_t stream, double bound) {
    Tensor<float> t(std::move(shape));
    seeded_fill(t, seed, stream, bound);
    return convert<double>(t);
}

// The tensors L depends on, in the order of named_grads.
std::vector<Tensor<double> *> inputs_of(GradProblem &p) {
    std::vector<Tensor<double> *> v{&p.x};
    for (size_t l = 0; l < p.params.size(); l++)
        for (Tensor<double> *t : {&p.params[l].weights, &p.params[l].bias, &p.state.layers[l].c, &p.state.layers[l].history})
            v.push_back(t);
    return v;
}
}  // namespace

GradProblem make_grad_problem(const ModelConfig &cfg) {
    GradProblem p;
    p.cfg = cfg;
    p.params = convert<double>(init_params(cfg));
    p.x = convert<double>(init_input(cfg));
    p.state = initial_state<double>(cfg);
    p.state.time = 5;
    uint32_t stream = 0x18000;
    for (auto &l : p.state.layers) {
        l.c = seeded(l.c.shape, cfg.seed, stream++, 0.5);
        l.history = seeded(l.history.shape, cfg.seed, stream++, 1.0);
    }
    p.dh = seeded({cfg.seq, cfg.batch, cfg.hidden}, cfg.seed, stream++, 1.0);
    p.dc_T = seeded({cfg.layers, cfg.batch, cfg.hidden}, cfg.seed, stream++, 1.0);
    return p;
}

std::vector<LayerParams<float>> float_params(const GradProblem &p) { return convert<float>(p.params); }
StackState<float> float_state(const GradProblem &p) { return convert<float>(p.state); }

double stack_loss(const GradProblem &p) {
    StackState<double> state = p.state;
    ref::StackOutput out = ref::stack_forward(p.cfg, p.params, p.x, state);
    double loss = 0;
    for (size_t i = 0; i < out.h.size(); i++) loss += p.dh.data[i] * out.h.data[i];
    for (size_t i = 0; i < out.c_T.size(); i++) loss += p.dc_T.data[i] * out.c_T.data[i];
    return loss;
}

std::vector<std::pair<std::string, const Tensor<double> *>> named_grads(const ref::StackGrads &g) {
    std::vector<std::pair<std::string, const Tensor<double> *>> v{{"dx", &g.dx}};
    for (size_t l = 0; l < g.layers.size(); l++) {
        const std::string layer = "layer_" + std::to_string(l) + "/";
        v.push_back({layer + "weights", &g.layers[l].dweights});
        v.push_back({layer + "bias", &g.layers[l].dbias});
        v.push_back({layer + "c0", &g.layers[l].dc0});
        v.push_back({layer + "history", &g.layers[l].dhistory});
    }
    return v;
}

FdResult finite_difference_check(const GradProblem &problem, const ref::StackGrads &analytic, double eps) {
    GradProblem p = problem;
    auto grads = named_grads(analytic);
    auto inputs = inputs_of(p);
    FdResult result;
    for (size_t i = 0; i < inputs.size(); i++) {
        Tensor<double> &v = *inputs[i];
        const Tensor<double> &g = *grads[i].second;
        if (g.shape != v.shape) return {1e30, grads[i].first + " (shape " + g.shape_str() + " vs " + v.shape_str() + ")"};
        double max_diff = 0, max_ref = 0;
        for (size_t e = 0; e < v.size(); e++) {
            const double saved = v.data[e];
            v.data[e] = saved + eps;
            const double up = stack_loss(p);
            v.data[e] = saved - eps;
            const double down = stack_loss(p);
            v.data[e] = saved;
            max_diff = std::max(max_diff, std::abs((up - down) / (2 * eps) - g.data[e]));
            max_ref = std::max(max_ref, std::abs(g.data[e]));
        }
        // Unused rows (history when k = 1) have zero gradients: their error is absolute.
        const double rel = max_ref > 0 ? max_diff / max_ref : max_diff;
        if (!(rel <= result.rel)) result = {rel, grads[i].first};
    }
    return result;
}

void load_example_plugin() {
    static const bool loaded = [] {
        load_plugin((std::filesystem::path(QRNN_CLI).parent_path() / "plugins" / "libqrnn_fo_tanh.so").string());
        return true;
    }();
    (void)loaded;
}

}  // namespace qrnn::test
