// --pass training --verify for the baselines: the output and every gradient of a recorded training step
// against the double references of reference/baselines_backward.h (loss = sum(dy * y), zero final-state
// gradients), each tensor relative to its own scale; the worst is reported.
#include "plugins/training_model.h"
#include "reference/baselines_backward.h"
#include "runtime/compare.h"

namespace qrnn {
namespace {

// The layers' [B][m] state tensors `name` stacked into [L][B][m].
Tensor<float> stacked(const std::vector<nn::State> &states, const char *name) {
    const Tensor<float> &first = states.at(0).at(name);
    Tensor<float> out({static_cast<int64_t>(states.size()), first.dim(0), first.dim(1)});
    for (size_t l = 0; l < states.size(); l++) set_leading_row(out, static_cast<int64_t>(l), states[l].at(name));
    return out;
}

Comparison verify_lstm(const TrainingStep &s) {
    std::vector<LstmParams<double>> layers;
    for (size_t l = 0; l < s.stack.size(); l++) {
        auto p = s.stack.layer(l).params();  // w_input, w_recurrent, bias
        layers.push_back({convert<double>(*p[0].value), convert<double>(*p[1].value), convert<double>(*p[2].value)});
    }
    const Tensor<double> x = convert<double>(s.x), h0 = convert<double>(stacked(s.initial, "h")),
                         c0 = convert<double>(stacked(s.initial, "c"));
    Comparison worst = compare(s.y, ref::lstm_stack_forward(x, layers, h0, c0).h);
    Tensor<double> zeros(h0.shape);
    ref::LstmStackGrads g = ref::lstm_stack_backward(x, layers, h0, c0, convert<double>(s.dy), zeros, zeros);
    keep_worst(worst, compare(s.dx, g.dx));
    for (size_t l = 0; l < s.stack.size(); l++) {
        auto p = s.stack.layer(l).params();
        keep_worst(worst, compare(*p[0].grad, g.layers[l].w_input));
        keep_worst(worst, compare(*p[1].grad, g.layers[l].w_recurrent));
        keep_worst(worst, compare(*p[2].grad, g.layers[l].bias));
    }
    keep_worst(worst, compare(stacked(s.d_initial, "h"), g.dh0));
    keep_worst(worst, compare(stacked(s.d_initial, "c"), g.dc0));
    return worst;
}

Comparison verify_cnn(const TrainingStep &s) {
    std::vector<LayerParams<double>> layers;
    for (size_t l = 0; l < s.stack.size(); l++) {
        auto p = s.stack.layer(l).params();  // weights, bias
        layers.push_back({convert<double>(*p[0].value), convert<double>(*p[1].value)});
    }
    const Tensor<double> x = convert<double>(s.x);
    Comparison worst = compare(s.y, ref::cnn_forward(x, layers));
    ref::CnnGrads g = ref::cnn_backward(x, layers, convert<double>(s.dy));
    keep_worst(worst, compare(s.dx, g.dx));
    for (size_t l = 0; l < s.stack.size(); l++) {
        auto p = s.stack.layer(l).params();
        keep_worst(worst, compare(*p[0].grad, g.layers[l].weights));
        keep_worst(worst, compare(*p[1].grad, g.layers[l].bias));
    }
    return worst;
}

const bool baseline_training_verifiers_registered = [] {
    for (const char *model : {"lstm-onednn", "lstm-halide", "lstm-cudnn"}) register_training_verifier(model, verify_lstm);
    register_training_verifier("cnn", verify_cnn);
    return true;
}();
}  // namespace
}  // namespace qrnn
