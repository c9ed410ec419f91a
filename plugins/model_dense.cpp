// Model plugin "qrnn-dense": the densely connected QRNN stack (nn/dense_stack.h) — inference through the
// plain layer's compiled pipelines reading their concatenated inputs in place, training (`--pass training`)
// through nn::DenseQrnn's forward with tape + backward; verified against reference/dense.h.
#include "core/error.h"
#include "nn/dense_stack.h"
#include "nn/stack.h"
#include "plugins/model.h"
#include "plugins/training_model.h"
#include "reference/dense.h"

namespace qrnn {
namespace {
// The block's parameters and a state (as DenseQrnn holds them) in double, for the reference.
std::vector<LayerParams<double>> double_params(nn::DenseQrnn &block) {
    std::vector<LayerParams<double>> params;
    for (int64_t l = 0; l < block.layers(); l++) params.push_back(convert<double>(block.layer_params(l)));
    return params;
}
StackState<double> double_state(const nn::DenseQrnn &block, const nn::State &s) {
    StackState<double> state;
    state.time = s.time;
    for (int64_t l = 0; l < block.layers(); l++) state.layers.push_back(convert<double>(nn::DenseQrnn::layer_state(s, l)));
    return state;
}

// The stack's one layer: the dense block (the stack factory's).
nn::DenseQrnn &dense_block(nn::LayerStack &stack) {
    auto *block = dynamic_cast<nn::DenseQrnn *>(&stack.layer(0));
    if (!block || stack.size() != 1) fail("--verify: the qrnn-dense stack is not one dense block");
    return *block;
}

// --verify of an inference run: the output and every layer's final c against ref::dense_forward.
Comparison verify_dense_inference(const InferenceRun &r) {
    nn::DenseQrnn &block = dense_block(r.stack);
    StackState<double> state = double_state(block, r.initial.at(0));
    ref::StackOutput ref = ref::dense_forward(r.cfg, double_params(block), convert<double>(r.x), state);
    Comparison cmp = compare(r.y, ref.h);
    for (int64_t l = 0; l < r.cfg.layers; l++)
        cmp.merge(compare(nn::DenseQrnn::layer_state(r.final.at(0), l).c, leading_row(ref.c_T, l)));
    return cmp;
}

// --pass training --verify: the output and every gradient against ref::dense_backward (loss = sum(dh * h)).
Comparison verify_dense_training(const TrainingStep &s) {
    nn::DenseQrnn &block = dense_block(s.stack);
    const ModelConfig &cfg = s.cfg;
    const std::vector<LayerParams<double>> params = double_params(block);
    const StackState<double> state = double_state(block, s.initial.at(0));
    const Tensor<double> x = convert<double>(s.x);
    StackState<double> forward_state = state;
    Tensor<double> y = ref::dense_forward(cfg, params, x, forward_state).h;
    ref::StackGrads g = ref::dense_backward(cfg, params, x, state, convert<double>(s.dy),
                                            Tensor<double>({cfg.layers, cfg.batch, cfg.hidden}));
    std::vector<LayerGradsF> grads(cfg.layers);
    const std::vector<nn::Param> block_params = block.params();  // weights and bias of layer l at 2l, 2l + 1
    for (int64_t l = 0; l < cfg.layers; l++) {
        grads[l].dweights = *block_params[2 * l].grad, grads[l].dbias = *block_params[2 * l + 1].grad;
        LayerState<float> d = nn::DenseQrnn::layer_state(s.d_initial.at(0), l);
        grads[l].dc0 = d.c, grads[l].dhistory = d.history;
    }
    return compare_training(s, y, g, grads);
}

// Layer l reads n + l*m channels; the block holds its [T][B][n + (L-1)m] buffer (and its gradient when
// training), dy's slice and a c scratch. Weights: the values, each layer's compiled pipeline's copy and
// (nn::Layer) the gradient.
MemoryShape dense_memory_shape(const ModelConfig &cfg) {
    const double TB = double(cfg.seq) * double(cfg.batch), n = double(cfg.input), m = double(cfg.hidden);
    MemoryShape shape;
    shape.weight_copies = 3;
    shape.later_input = n;
    shape.input_growth = m;
    shape.extra_floats = TB * (n + double(cfg.layers - 1) * m) * (cfg.training_pass() ? 2 : 1) + 2 * TB * m;
    return shape;
}

const bool model_dense_registered = [] {
    ModelPlugin p;
    p.name = "qrnn-dense";
    p.description = "densely connected QRNN stack: layer l reads concat(input, h_0..h_{l-1}) in place (no copy); "
                    "output = last layer's h";
    p.options = {"pooling", "window", "layers", "schedule", "target", "precision", "precision-training", "mode", "zoneout", "dropout"};
    p.targets = {"cpu"};
    p.validate = [](const ModelConfig &cfg) { cfg.pooling_variant(); };
    p.features = {"dense"};
    p.memory = dense_memory_shape;
    p.stack = [](const ModelConfig &cfg) {  // one block holding every layer: layer l reads all earlier outputs
        std::vector<std::unique_ptr<nn::Layer>> layers;
        layers.push_back(std::make_unique<nn::DenseQrnn>(cfg));
        return layers;
    };
    p.inference_verifier = verify_dense_inference;
    p.verifier = verify_dense_training;
    register_model(std::move(p));
    return true;
}();
}  // namespace
}  // namespace qrnn
