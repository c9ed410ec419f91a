// Model plugins "qrnn-varlen", "qrnn-bidir", "qrnn-bidir-sum", "qrnn-bidir-varlen": stacks of the
// variable-length / bidirectional QRNN layer (nn/seq_layer.h); -varlen models draw seeded lengths
// (nn::seq_lengths: sequence 0 is T long). Inference and `--pass training`, verified against
// reference/qrnn_seq.h.
#include "core/error.h"
#include "nn/qrnn_layer.h"
#include "nn/seq_layer.h"
#include "plugins/model.h"
#include "plugins/training_model.h"
#include "reference/qrnn_seq.h"

namespace qrnn {
namespace {
// The stack's layers as seq layers, with their parameters and the given states in double.
struct DoubleStack {
    std::vector<LayerParams<double>> params;
    std::vector<LayerState<double>> states;
    std::vector<const Int8LayerParams *> int8;  // an int8 stack's (calibrated)
    const nn::SeqQrnnLayer *first = nullptr;
};
DoubleStack double_stack(nn::LayerStack &stack, const std::vector<nn::State> &states, bool stack_is_int8 = false) {
    DoubleStack d;
    for (size_t l = 0; l < stack.size(); l++) {
        auto *layer = dynamic_cast<nn::SeqQrnnLayer *>(&stack.layer(l));
        if (!layer) fail("--verify: layer ", l, " is not a variable-length/bidirectional QRNN layer");
        if (!d.first) d.first = layer;
        d.params.push_back(convert<double>(layer->layer_params()));
        d.states.push_back(convert<double>(nn::layer_state(states.at(l))));
    }
    if (stack_is_int8) d.int8 = stack.int8_layers();
    return d;
}

// --verify of an inference run: the output against ref::seq_stack_forward (int8: with the layers' quantized parameters).
Comparison verify_seq_inference(const InferenceRun &r) {
    DoubleStack d = double_stack(r.stack, r.initial, r.cfg.precision == "int8");
    return compare(r.y, ref::seq_stack_forward(r.cfg, d.first->options(), d.params, convert<double>(r.x),
                                               d.first->lengths(), d.states, 0, d.int8));
}

// --pass training --verify: the output and every gradient against ref::seq_stack_backward.
Comparison verify_seq_training(const TrainingStep &s) {
    DoubleStack d = double_stack(s.stack, s.initial);
    const SeqOptions &options = d.first->options();
    const Tensor<double> x = convert<double>(s.x);
    const int64_t time = s.initial.at(0).time;
    Tensor<double> y = ref::seq_stack_forward(s.cfg, options, d.params, x, d.first->lengths(), d.states, time);
    ref::StackGrads g =
        ref::seq_stack_backward(s.cfg, options, d.params, x, d.first->lengths(), d.states, time, convert<double>(s.dy));
    return compare_training(s, y, g, stack_layer_grads(s));
}

// Two directions: 2G gate rows, states and outputs; concatenated, layers >= 1 read 2m channels. Weights:
// the values, the compiled pipeline's copy and (nn::Layer) the gradient.
MemoryShape seq_memory_shape(const ModelConfig &cfg) {
    const SeqOptions options = nn::seq_model_options(cfg.model);
    MemoryShape shape;
    shape.weight_copies = 3;
    shape.directions = double(options.directions);
    shape.later_input = double(cfg.hidden) * double(options.out_width_factor());
    return shape;
}

const bool model_seq_registered = [] {
    struct Entry {
        const char *name, *description;
        std::vector<std::string> features;
    };
    const Entry models[] = {
        {"qrnn-varlen", "QRNN stack over variable-length sequences (seeded lengths; state carried past each end, outputs 0)",
         {"variable-length"}},
        {"qrnn-bidir", "bidirectional QRNN stack: forward + time-reversed scan sharing one conv GEMM, outputs concatenated",
         {"bidirectional"}},
        {"qrnn-bidir-sum", "bidirectional QRNN stack, the two directions' outputs summed", {"bidirectional"}},
        {"qrnn-bidir-varlen", "bidirectional QRNN stack over variable-length sequences (seeded lengths)",
         {"bidirectional", "variable-length"}}};
    for (auto &[name, description, features] : models) {
        ModelPlugin p;
        p.name = name, p.description = description, p.features = features;
        p.options = {"pooling", "window", "layers", "schedule", "target", "precision", "precision-training", "int8", "mode",
                     "zoneout", "dropout"};
        p.targets = {"cpu"};
        p.validate = [](const ModelConfig &cfg) {
            cfg.pooling_variant().require_backward();
            find_seq_schedule(cfg.schedule);
        };
        p.memory = seq_memory_shape;
        p.layer = [](const ModelConfig &cfg, int64_t index) -> std::unique_ptr<nn::Layer> {
            return std::make_unique<nn::SeqQrnnLayer>(cfg, index, nn::seq_model_options(cfg.model));
        };
        // bf16: a layer >= 1 reads the layer below's output (float here, double in the reference), 2m channels of it
        // for two directions concatenated, twice the plain stack's, each of which may round a bf16 step apart: one
        // bf16 step (2^-8) of the largest value (measured 2.6e-3: a training step at B=3 T=7 m=320, 2 layers).
        p.bf16_tolerance = 1.0 / 256;
        p.inference_verifier = verify_seq_inference;
        p.verifier = verify_seq_training;
        register_model(std::move(p));
    }
    return true;
}();
}  // namespace
}  // namespace qrnn
