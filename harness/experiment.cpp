#include "harness/experiment.h"

#include <algorithm>
#include <memory>

#include "core/error.h"
#include "plugins/model.h"
#include "plugins/training_model.h"
#include "runtime/memory_guard.h"

namespace qrnn {
namespace {
// A built model of one config.
struct Prepared {
    RunReport report;
    std::unique_ptr<Model> model;
};

Prepared prepare(const ModelConfig &cfg, const RunOptions &opts) {
    validate_model_config(cfg);
    check_model_memory(cfg, opts);
    const ModelPlugin &plugin = find_model(cfg.model);
    Prepared p{{cfg, {}, 0, std::nullopt}, nullptr};
    require_model_available(plugin, cfg);
    auto supports = [&](const char *option) { return std::count(plugin.options.begin(), plugin.options.end(), option) > 0; };
    if (!opts.load_path.empty() && !supports("load")) fail("--load: model '", cfg.model, "' does not read HDF5 dumps");
    if (!opts.dump_path.empty() && !supports("dump") && !cfg.training_pass())  // every training pass writes one
        fail("--dump: model '", cfg.model, "' does not write HDF5 dumps of its inference pass (--pass training does)");
    p.model = cfg.training_pass() ? build_training_model(cfg, opts) : plugin.build(cfg, opts);
    return p;
}

void finish(Prepared &p, const RunOptions &opts) {
    p.report.gflops = p.model->flops() / (p.report.timing.median() * 1e6);
    if (opts.verify) p.report.error = p.model->verify();
    if (!opts.dump_path.empty()) p.model->dump(opts.dump_path);
}
}  // namespace

// Dispatches on cfg.model through the model registry (plugins/model.h).
RunReport run_experiment(const ModelConfig &cfg, const RunOptions &opts) {
    Prepared p = prepare(cfg, opts);
    p.report.timing = time_runs([&] { p.model->forward(); }, opts.warmup, opts.repeats);
    finish(p, opts);
    return p.report;
}

std::vector<RunReport> run_experiments_interleaved(const std::vector<ModelConfig> &configs, const RunOptions &opts) {
    std::vector<Prepared> all;
    for (auto &cfg : configs) all.push_back(prepare(cfg, opts));
    for (int i = 0; i < opts.warmup; i++)
        for (auto &p : all) p.model->forward();
    for (int i = 0; i < opts.repeats; i++)
        for (auto &p : all) p.report.timing.ms.push_back(time_runs([&] { p.model->forward(); }, 0, 1).ms.at(0));
    std::vector<RunReport> reports;
    for (auto &p : all) {
        finish(p, opts);
        reports.push_back(p.report);
    }
    return reports;
}

}  // namespace qrnn
