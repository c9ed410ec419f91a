// Model plugin "qrnn": a stack of QRNN layers (core/qrnn_layer) run through compiled Halide layers with a
// named schedule, verified against ref::stack_forward.
#include "nn/qrnn_layer.h"
#include "plugins/model.h"
#include "plugins/training_model.h"
#include "reference/qrnn_backward.h"
#include "runtime/hdf5_dump.h"
#include "runtime/stack.h"

namespace qrnn {
namespace {
RunData prepare(const ModelConfig &cfg, const RunOptions &opts) {
    RunData data;
    if (!opts.load_path.empty()) {
        data = read_dump(opts.load_path, cfg);
    } else {
        data.x = init_input(cfg);
        data.params = init_params(cfg);
        data.state = initial_state<float>(cfg);
    }
    if (opts.verify) {
        std::string from = opts.load_path.empty() ? "" : " (in " + opts.load_path + ")";
        require_finite(data.x, "input x" + from);
        for (size_t l = 0; l < data.params.size(); l++) {
            require_finite(data.params[l].weights, "layer " + std::to_string(l) + " weights" + from);
            require_finite(data.params[l].bias, "layer " + std::to_string(l) + " bias" + from);
            require_finite(data.state.layers[l].c, "layer " + std::to_string(l) + " c0" + from);
            require_finite(data.state.layers[l].history, "layer " + std::to_string(l) + " history" + from);
        }
    }
    return data;
}

class QrnnModel : public Model {
public:
    QrnnModel(const ModelConfig &cfg, const RunOptions &opts)
        : cfg_(cfg), data_(prepare(cfg, opts)), stack_(cfg, data_.params, opts.knobs) {}

    void forward() override {
        state_ = data_.state;
        stack_.forward(data_.x, state_);
    }
    Comparison verify() override {
        run_outputs();
        StackState<double> ref_state = convert<double>(data_.state);
        ref::StackOutput ref = ref::stack_forward(cfg_, convert<double>(data_.params), convert<double>(data_.x), ref_state);
        Comparison cmp = compare(data_.h, ref.h);
        cmp.merge(compare(data_.c_T, ref.c_T));
        return cmp;
    }
    double flops() const override { return stack_.flops(cfg_.seq); }
    void dump(const std::string &path) override {
        if (data_.h.size() == 0) run_outputs();
        write_dump(path, cfg_, data_);
    }

private:
    void run_outputs() {
        state_ = data_.state;
        StackResult out = stack_.forward(data_.x, state_);
        data_.h = out.h;
        data_.c_T = out.c_T;
    }
    ModelConfig cfg_;
    RunData data_;
    QrnnStack stack_;
    StackState<float> state_;
};

// --pass training --verify: the output and every gradient against ref::stack_backward (loss = sum(dh * h)).
Comparison verify_qrnn_training(const TrainingStep &s) {
    const ModelConfig &cfg = s.cfg;
    std::vector<LayerParams<double>> params;
    StackState<double> state;
    state.time = s.initial.at(0).time;
    for (size_t l = 0; l < s.stack.size(); l++) {
        auto p = s.stack.layer(l).params();
        params.push_back({convert<double>(*p[0].value), convert<double>(*p[1].value)});
        state.layers.push_back(convert<double>(nn::layer_state(s.initial[l])));
    }
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
    p.options = {"pooling", "window", "layers", "schedule", "knob", "target", "mode", "zoneout", "dropout", "load", "dump"};
    p.targets = {"cpu", "gpu"};  // by schedule: target_family of each (`qrnn plugins --kind schedule`)
    p.validate = [](const ModelConfig &cfg) { cfg.pooling_variant(); };
    p.build = [](const ModelConfig &cfg, const RunOptions &opts) -> std::unique_ptr<Model> {
        return std::make_unique<QrnnModel>(cfg, opts);
    };
    p.layer = [](const ModelConfig &cfg, int64_t index) -> std::unique_ptr<nn::Layer> {
        return std::make_unique<nn::QrnnLayer>(cfg, index);
    };
    p.verifier = verify_qrnn_training;
    register_model(std::move(p));
    return true;
}();
}  // namespace
}  // namespace qrnn
