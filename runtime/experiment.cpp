#include "runtime/experiment.h"

#include "reference/reference.h"
#include "runtime/compare.h"
#include "runtime/hdf5_dump.h"
#include "runtime/stack.h"

namespace qrnn {
namespace {
std::vector<LayerParams<double>> to_double(const std::vector<LayerParams<float>> &p) {
    std::vector<LayerParams<double>> out;
    for (auto &l : p) out.push_back({convert<double>(l.weights), convert<double>(l.bias)});
    return out;
}
StackState<double> to_double(const StackState<float> &s) {
    StackState<double> out;
    out.time = s.time;
    for (auto &l : s.layers) out.layers.push_back({convert<double>(l.history), convert<double>(l.c)});
    return out;
}
}  // namespace

RunReport run_experiment(const ModelConfig &cfg, const RunOptions &opts) {
    cfg.validate();
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

    QrnnStack stack(cfg, data.params, opts.knobs);
    RunReport report{cfg, {}, 0, std::nullopt};
    StackState<float> state = data.state;
    report.timing = time_runs(
        [&] {
            state = data.state;
            stack.forward(data.x, state);
        },
        opts.warmup, opts.repeats);
    report.gflops = stack.flops(cfg.seq) / (report.timing.median() * 1e6);

    if (opts.verify || !opts.dump_path.empty()) {
        state = data.state;
        StackResult out = stack.forward(data.x, state);
        data.h = out.h;
        data.c_T = out.c_T;
    }
    if (opts.verify) {
        StackState<double> ref_state = to_double(data.state);
        ref::StackOutput ref = ref::stack_forward(cfg, to_double(data.params), convert<double>(data.x), ref_state);
        Comparison cmp = compare(data.h, ref.h);
        cmp.merge(compare(data.c_T, ref.c_T));
        report.error = cmp;
    }
    if (!opts.dump_path.empty()) write_dump(opts.dump_path, cfg, data);
    return report;
}

}  // namespace qrnn
