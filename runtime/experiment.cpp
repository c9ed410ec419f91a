#include "runtime/experiment.h"

#include <algorithm>

#include "core/error.h"
#include "plugins/model.h"

namespace qrnn {

// Dispatches on cfg.model through the model registry (plugins/model.h).
RunReport run_experiment(const ModelConfig &cfg, const RunOptions &opts) {
    cfg.validate();
    const ModelPlugin &plugin = find_model(cfg.model);
    RunReport report{cfg, {}, 0, std::nullopt};
    report.unavailable = model_unavailable(plugin);
    if (!report.unavailable.empty()) return report;
    auto supports = [&](const char *option) { return std::count(plugin.options.begin(), plugin.options.end(), option) > 0; };
    if (!opts.load_path.empty() && !supports("load")) fail("--load: model '", cfg.model, "' does not read HDF5 dumps");
    if (!opts.dump_path.empty() && !supports("dump")) fail("--dump: model '", cfg.model, "' does not write HDF5 dumps");
    std::unique_ptr<Model> model = plugin.build(cfg, opts);
    report.timing = time_runs([&] { model->forward(); }, opts.warmup, opts.repeats);
    report.gflops = model->flops() / (report.timing.median() * 1e6);
    if (opts.verify) report.error = model->verify();
    if (!opts.dump_path.empty()) model->dump(opts.dump_path);
    return report;
}

}  // namespace qrnn
