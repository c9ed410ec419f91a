#include "sweep/train_run.h"

#include "lm/run_files.h"
#include "tasks/seq_trainer.h"
#include "lm/trainer.h"
#include "core/error.h"

namespace qrnn::sweep {
namespace {

// The task of a run's train.task key ("lm" without one); an unknown task is an error naming the key.
std::string task_of(const RunSpec &spec) {
    auto it = spec.train.find("task");
    if (it == spec.train.end()) return "lm";
    lm::TrainConfig probe;
    lm::set_train_key(probe, "task", it->second, "train.task");
    return probe.seq.task;
}

std::string joined(const std::vector<double> &values) {
    std::string text;
    for (double v : values) text += (text.empty() ? "" : ",") + value_str(v);
    return text;
}

void record_language_model(const lm::TrainConfig &cfg, std::map<std::string, Value> &row, std::ostream &log) {
    const lm::TrainOutcome out = lm::train_language_model(cfg, log);
    std::vector<double> train_curve, val_curve, seconds_curve;
    double seconds = 0;
    for (auto &e : out.history) {
        train_curve.push_back(e.train_ppl), val_curve.push_back(e.val_ppl), seconds += e.seconds;
        seconds_curve.push_back(seconds);
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
    row["train_ppl_curve"] = joined(train_curve);
    row["val_ppl_curve"] = joined(val_curve);
    row["seconds_curve"] = joined(seconds_curve);
    row["train_seconds"] = seconds;
}

void record_seq_task(const lm::TrainConfig &cfg, std::map<std::string, Value> &row, std::ostream &log) {
    const lm::SeqResults out = lm::train_seq_task(cfg, log);
    if (out.epochs.empty()) fail("task ", cfg.seq.task, ": no step ran (train.time_limit ", cfg.seq.time_limit, " s)");
    std::vector<double> loss, accuracy;
    for (auto &e : out.epochs) loss.push_back(e.train_loss), accuracy.push_back(e.accuracy);
    auto attr = [&](const char *name) { return out.attrs.at(name); };
    row["task"] = std::get<std::string>(attr("task"));
    row["metric"] = std::get<std::string>(attr("metric"));
    row["attention"] = std::get<std::string>(attr("attention"));
    row["chance"] = std::get<double>(attr("chance"));
    row["parameters"] = std::get<int64_t>(attr("parameters"));
    row["best_accuracy"] = std::get<double>(attr("best_accuracy"));
    row["final_accuracy"] = std::get<double>(attr("final_accuracy"));
    row["epochs_done"] = static_cast<int64_t>(out.epochs.size());
    row["steps"] = static_cast<int64_t>(out.epochs.back().step);
    row["train_seconds"] = out.epochs.back().seconds;  // evaluations included
    row["train_loss_curve"] = joined(loss);
    row["accuracy_curve"] = joined(accuracy);
}

}  // namespace

bool is_training_run(const RunSpec &spec) { return !spec.train.empty(); }

// A train.KEY that a run key already gives (train.model beside model): one of the two would be ignored.
void refuse_train_keys_of_run_keys(const RunSpec &spec) {
    static const std::vector<std::pair<const char *, const char *>> train_and_run{
        {"model", "model"},   {"pooling", "pooling"},   {"window", "window"}, {"emb", "input"},   {"hidden", "hidden"},
        {"layers", "layers"}, {"zoneout", "zoneout"},   {"dropout", "dropout"}, {"seed", "seed"}, {"schedule", "schedule"},
        {"target", "target"}, {"batch", "batch"},       {"bptt", "seq"}};
    for (auto &[train_key, run_key] : train_and_run)
        if (spec.train.count(train_key))
            fail("key '", train_key, "': train.", train_key, " '", spec.train.at(train_key), "' beside the run key ", run_key,
                 ", which sets the same: give it once, as ", run_key);
}

lm::TrainConfig training_config(const RunSpec &spec) {
    refuse_train_keys_of_run_keys(spec);
    const std::string task = task_of(spec);
    lm::TrainConfig cfg = lm::task_defaults(task);
    const ModelConfig &m = spec.config;
    cfg.lm.stack = m;  // the model spec; the run's batch and length are the train keys below
    cfg.batch = m.batch;
    if (task == "lm") cfg.bptt = m.seq;  // a synthetic task's lengths are its min_len..max_len keys
    cfg.log_seconds = 30;
    for (auto &[key, value] : spec.train) lm::set_train_key(cfg, key, value, "train." + key);
    return cfg;
}

void validate_training_run(const RunSpec &spec) {
    const lm::TrainConfig cfg = training_config(spec);
    if (cfg.seq.task == "lm") cfg.validate();
    else lm::validate_seq_task(cfg);
    lm::check_token_files(cfg);
    lm::check_output_files(cfg);  // train.checkpoint, when given (the sweep's own checkpoints are named later)
}

void record_training_run(const RunSpec &spec, std::map<std::string, Value> &row, std::ostream &log,
                         const std::string &checkpoint) {
    lm::TrainConfig cfg = training_config(spec);
    if (!spec.train.count("checkpoint")) cfg.checkpoint = checkpoint;
    if (cfg.seq.task == "lm") record_language_model(cfg, row, log);
    else record_seq_task(cfg, row, log);
}

}  // namespace qrnn::sweep
