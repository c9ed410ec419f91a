#include "plugins/training_model.h"

#include <map>

#include "core/error.h"
#include "core/streams.h"
#include "plugins/stack_dump.h"
#include "runtime/seeded_fill.h"

namespace qrnn {
namespace {
std::map<std::string, TrainingVerifier> &verifiers() {
    static std::map<std::string, TrainingVerifier> all;
    return all;
}


class TrainingModel : public Model {
public:
    TrainingModel(const ModelConfig &cfg, const RunOptions &opts) : cfg_(cfg), stack_(cfg) {
        stack_.prepare_training();
        initial_ = stack_.initial_state(cfg.batch);
        x_ = init_input(cfg);
        if (!opts.load_path.empty()) load_stack_dump(opts.load_path, cfg_, stack_, x_, initial_, false);
        dy_ = Tensor<float>({cfg.seq, cfg.batch, stack_.layer(stack_.size() - 1).output_size()});
        seeded_fill(dy_, cfg.seed, streams::kBenchOutputGrad, 1.0);
        tapes_ = stack_.make_tapes();
    }
    void forward() override {  // the timed training step
        std::vector<nn::State> states = initial_;
        stack_.zero_grads();
        y_ = &stack_.forward(x_, states, &tapes_);  // the stack's own output: no copy of [T][B][m] per step
        stack_.backward(tapes_, dy_, nullptr, &dx_, &d_initial_);
        final_ = std::move(states);
    }
    Comparison verify() override {
        auto it = verifiers().find(cfg_.model);
        if (it == verifiers().end()) fail("--verify --pass training: model '", cfg_.model, "' has no reference gradients");
        forward();
        return it->second({cfg_, stack_, x_, dy_, *y_, dx_, initial_, d_initial_});
    }
    double flops() const override {
        return stack_.forward_flops(cfg_.seq, cfg_.batch) + stack_.backward_flops(cfg_.seq, cfg_.batch);
    }
    void dump(const std::string &path) override {
        if (!y_) forward();
        if (!qrnn_shaped(stack_, initial_)) return dump_named(path);
        RunData d = stack_run_data(cfg_, stack_, x_, initial_, *y_, final_);
        d.dh = dy_, d.dx = dx_;
        for (size_t l = 0; l < stack_.size(); l++) {
            auto p = stack_.layer(l).params();
            d.grads.push_back({*p[0].grad, *p[1].grad, d_initial_[l].at("c"), d_initial_[l].at("history")});
        }
        write_dump(path, cfg_, d);
    }

private:
    // Any other stack: every parameter, state and gradient under its own name (runtime/hdf5_dump.h).
    void dump_named(const std::string &path) {
        NamedDump d{&x_, &dx_, y_, &dy_, {}};
        for (size_t l = 0; l < stack_.size(); l++) {
            NamedLayerDump &layer = d.layers.emplace_back();
            for (const nn::Param &p : stack_.layer(l).params())
                layer.params.push_back({p.name, p.value}), layer.grads.push_back({p.name, p.grad});
            for (size_t i = 0; i < initial_[l].names.size(); i++) {
                layer.state.push_back({initial_[l].names[i], &initial_[l].tensors[i]});
                layer.state_grads.push_back({initial_[l].names[i], &d_initial_[l].at(initial_[l].names[i])});
            }
        }
        write_named_dump(path, cfg_, d);
    }
    ModelConfig cfg_;
    nn::LayerStack stack_;
    Tensor<float> x_, dy_, dx_;
    const Tensor<float> *y_ = nullptr;  // the last layer's output of the last step (held by stack_)
    std::vector<nn::State> initial_, final_, d_initial_;
    nn::Tapes tapes_;
};
}  // namespace

void register_training_verifier(const std::string &model, TrainingVerifier verifier) {
    if (verifiers().count(model)) fail("a training verifier for model '", model, "' is already registered");
    verifiers()[model] = std::move(verifier);
}

Comparison compare_training(const TrainingStep &s, const Tensor<double> &ref_y, const ref::StackGrads &ref,
                            const std::vector<LayerGradsF> &grads) {
    Comparison cmp = compare(s.y, ref_y);
    keep_worst(cmp, compare(s.dx, ref.dx));
    for (size_t l = 0; l < grads.size(); l++) {
        keep_worst(cmp, compare(grads[l].dweights, ref.layers.at(l).dweights));
        keep_worst(cmp, compare(grads[l].dbias, ref.layers[l].dbias));
        keep_worst(cmp, compare(grads[l].dc0, ref.layers[l].dc0));
        keep_worst(cmp, compare(grads[l].dhistory, ref.layers[l].dhistory));
    }
    return cmp;
}

std::vector<LayerGradsF> stack_layer_grads(const TrainingStep &s) {
    std::vector<LayerGradsF> grads;
    for (size_t l = 0; l < s.stack.size(); l++) {
        auto p = s.stack.layer(l).params();
        LayerGradsF g;
        g.dweights = *p.at(0).grad, g.dbias = *p.at(1).grad;
        g.dc0 = s.d_initial.at(l).at("c"), g.dhistory = s.d_initial[l].at("history");
        grads.push_back(std::move(g));
    }
    return grads;
}

std::unique_ptr<Model> build_training_model(const ModelConfig &cfg, const RunOptions &opts) {
    if (!opts.knobs.empty()) fail("--knob is not supported with --pass training (training schedules use their defaults)");
    const ModelPlugin &plugin = find_model(cfg.model);
    if (!model_trains(plugin)) {
        std::string known;
        for (auto &name : training_model_names()) known += (known.empty() ? "" : ", ") + name;
        fail("model '", cfg.model, "' has no backward pass (--pass training runs: ", known, ")");
    }
    if (plugin.build_training) return plugin.build_training(cfg, opts);
    return std::make_unique<TrainingModel>(cfg, opts);
}

}  // namespace qrnn
