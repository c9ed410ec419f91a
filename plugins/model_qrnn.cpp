// Model plugin "qrnn": a stack of QRNN layers (nn/qrnn_layer.h) run through compiled Halide layers with a
// named schedule, verified against ref::stack_forward and ref::stack_backward.
#include "nn/qrnn_layer.h"
#include "plugins/model.h"
#include "plugins/training_model.h"
#include "reference/qrnn_backward.h"

namespace qrnn {
namespace {
// The stack's parameters and the given states in double, for the reference.
std::vector<LayerParams<double>> double_params(nn::LayerStack &stack) {
    std::vector<LayerParams<double>> params;
    for (size_t l = 0; l < stack.size(); l++) {
        auto p = stack.layer(l).params();
        params.push_back({convert<double>(*p[0].value), convert<double>(*p[1].value)});
    }
    return params;
}
StackState<double> double_state(const std::vector<nn::State> &states) {
    StackState<double> state;
    state.time = states.at(0).time;
    for (const nn::State &s : states) state.layers.push_back(convert<double>(nn::layer_state(s)));
    return state;
}

// --verify of an inference run: the output and every layer's final c against ref::stack_forward (int8: with the
// layers' quantized parameters).
Comparison verify_qrnn_inference(const InferenceRun &r) {
    StackState<double> state = double_state(r.initial);
    std::vector<const Int8LayerParams *> int8;
    if (r.cfg.precision == "int8") int8 = r.stack.int8_layers();
    ref::StackOutput ref = ref::stack_forward(r.cfg, double_params(r.stack), convert<double>(r.x), state, int8);
    Comparison cmp = compare(r.y, ref.h);
    cmp.merge(compare(nn::stacked_state(r.final, "c"), ref.c_T));
    return cmp;
}

// --pass training --verify: the output and every gradient against ref::stack_backward (loss = sum(dh * h)).
Comparison verify_qrnn_training(const TrainingStep &s) {
    const ModelConfig &cfg = s.cfg;
    const std::vector<LayerParams<double>> params = double_params(s.stack);
    const StackState<double> state = double_state(s.initial);
    const Tensor<double> x = convert<double>(s.x);
    StackState<double> forward_state = state;
    Tensor<double> y = ref::stack_forward(cfg, params, x, forward_state).h;
    ref::StackGrads g = ref::stack_backward(cfg, params, x, state, convert<double>(s.dy),
                                            Tensor<double>({cfg.layers, cfg.batch, cfg.hidden}));
    return compare_training(s, y, g, stack_layer_grads(s));
}

const bool model_qrnn_registered = [] {
    ModelPlugin p;
    p.name = "qrnn";
    p.description = "QRNN stack: masked conv + gates + pooling scan (Halide, named schedule)";
    p.options = {"pooling", "window", "layers", "schedule", "knob", "target", "precision", "precision-training", "int8", "mode", "zoneout", "dropout", "load", "dump"};
    p.targets = {"cpu", "gpu"};  // by schedule: target_family of each (`qrnn plugins --kind schedule`)
    p.validate = [](const ModelConfig &cfg) { cfg.pooling_variant(); };
    p.layer = [](const ModelConfig &cfg, int64_t index) -> std::unique_ptr<nn::Layer> {
        return std::make_unique<nn::QrnnLayer>(cfg, index);
    };
    p.inference_verifier = verify_qrnn_inference;
    p.verifier = verify_qrnn_training;
    register_model(std::move(p));
    return true;
}();
}  // namespace
}  // namespace qrnn
