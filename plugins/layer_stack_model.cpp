#include "plugins/layer_stack_model.h"

#include "core/error.h"
#include "plugins/stack_dump.h"

namespace qrnn {

LayerStackModel::LayerStackModel(const ModelConfig &cfg, const RunOptions &opts, InferenceVerifier verifier)
    : cfg_(cfg), stack_(cfg), verifier_(std::move(verifier)) {
    stack_.set_knobs(opts.knobs);
    x_ = init_input(cfg);
    initial_ = stack_.initial_state(cfg.batch);
    if (!opts.load_path.empty()) load_stack_dump(opts.load_path, cfg_, stack_, x_, initial_, opts.verify);
    if (cfg.precision == "int8") stack_.calibrate_int8({calibration_input(cfg)});  // held out: not the timed input
}

void LayerStackModel::forward() {
    final_ = initial_;
    y_ = &stack_.forward(x_, final_, nullptr);
}

Comparison LayerStackModel::verify() {
    if (!verifier_) fail("--verify: model '", cfg_.model, "' has no inference check against a reference");
    forward();
    return verifier_({cfg_, stack_, x_, *y_, initial_, final_});
}

void LayerStackModel::dump(const std::string &path) {
    if (!y_) forward();
    write_dump(path, cfg_, stack_run_data(cfg_, stack_, x_, initial_, *y_, final_));
}

}  // namespace qrnn
