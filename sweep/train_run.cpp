#include "sweep/train_run.h"

#include "lm/trainer.h"

namespace qrnn::sweep {

bool is_training_run(const RunSpec &spec) { return !spec.train.empty(); }

lm::TrainConfig training_config(const RunSpec &spec) {
    lm::TrainConfig cfg;
    const ModelConfig &m = spec.config;
    ModelConfig &stack = cfg.lm.stack;
    stack.model = m.model, stack.pooling = m.pooling, stack.window = m.window, stack.input = m.input;
    stack.hidden = m.hidden, stack.layers = m.layers, stack.zoneout = m.zoneout, stack.dropout = m.dropout;
    stack.seed = m.seed, stack.schedule = m.schedule, stack.target = m.target;
    cfg.batch = m.batch, cfg.bptt = m.seq;
    cfg.log_seconds = 30;
    for (auto &[key, value] : spec.train) lm::set_train_key(cfg, key, value, "train." + key);
    return cfg;
}

void record_training_run(const RunSpec &spec, std::map<std::string, Value> &row, std::ostream &log,
                         const std::string &checkpoint) {
    lm::TrainConfig cfg = training_config(spec);
    if (!spec.train.count("checkpoint")) cfg.checkpoint = checkpoint;
    const lm::TrainOutcome out = lm::train_language_model(cfg, log);
    std::string train_curve, val_curve;
    for (auto &e : out.history) {
        train_curve += (train_curve.empty() ? "" : ",") + value_str(e.train_ppl);
        val_curve += (val_curve.empty() ? "" : ",") + value_str(e.val_ppl);
    }
    const lm::EpochRecord last = out.history.empty() ? lm::EpochRecord{} : out.history.back();
    row["best_val_ppl"] = out.best_val_ppl;
    row["unigram_val_ppl"] = out.unigram_val_ppl;
    row["test_ppl"] = out.test_ppl;
    row["train_ppl"] = last.train_ppl;
    row["epochs_done"] = static_cast<int64_t>(out.history.size());
    row["tokens_per_s"] = last.tokens_per_s;
    row["rnn_ms"] = last.rnn_ms;
    row["softmax_ms"] = last.softmax_ms;
    row["optim_ms"] = last.optim_ms;
    row["median_ms"] = last.rnn_ms + last.softmax_ms + last.optim_ms;
    row["train_ppl_curve"] = train_curve;
    row["val_ppl_curve"] = val_curve;
    double seconds = 0;
    for (auto &e : out.history) seconds += e.seconds;
    row["train_seconds"] = seconds;
    row["train"] = train_settings(spec);
}


}  // namespace qrnn::sweep
