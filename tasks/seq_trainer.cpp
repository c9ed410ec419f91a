#include "tasks/seq_trainer.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "core/error.h"
#include "lm/run_files.h"
#include "tasks/distillation.h"
#include "tasks/seq_checkpoint.h"
#include "tasks/seq_classifier.h"
#include "tasks/task_run.h"
#include "tasks/text_task.h"
#include "nn/optimizer.h"
#include "nn/seq2seq.h"
#include "plugins/model.h"
#include "runtime/machine_info.h"
#include "runtime/memory_guard.h"

namespace qrnn::lm {
namespace {

using Clock = std::chrono::steady_clock;

bool is_transduction(const std::string &task) { return task == "reverse" || task == "sort"; }
bool is_classifier(const std::string &task) { return task == "classify" || task == "classify-text"; }
bool is_encdec(const std::string &model) { return model == "encdec" || model == "encdec-noattn"; }
bool attention_on(const TrainConfig &cfg) {
    return cfg.seq.attention.empty() ? cfg.lm.stack.model == "encdec" : cfg.seq.attention == "on";
}

double load_average() {  // 1-minute load average, NaN where /proc/loadavg is missing
    double load = NAN;
    std::ifstream("/proc/loadavg") >> load;
    return load;
}

class TransductionRun : public TaskRun {
public:
    explicit TransductionRun(const TrainConfig &cfg)
        : batch_(cfg.batch), eval_size_(cfg.seq.eval_size), seed_(cfg.lm.stack.seed), attention_(attention_on(cfg)) {
        task_.sort = cfg.seq.task == "sort";
        task_.vocab = cfg.seq.vocab, task_.min_len = cfg.seq.min_len, task_.max_len = cfg.seq.max_len;
        ModelConfig base(cfg.lm.stack, {cfg.batch, task_.max_len + 1});
        base.model = "encdec", base.input = task_.symbols();
        EncDecConfig ec = make_encdec_config(base, task_.max_len, task_.symbols(), attention_);
        ec.validate();
        model_ = std::make_unique<nn::Seq2Seq>(ec, task_.symbols());
    }
    std::vector<nn::Param> params() override { return model_->params(); }
    void set_stochastic(bool on) override { model_->net().set_stochastic(on); }
    double train_step(uint64_t index) override {
        model_->net().set_mask_draw(index);
        return model_->loss_and_grads(nn::transduction_batch(task_, batch_, seed_, 0, index));
    }
    double accuracy(const std::function<bool()> &stop, int64_t *evaluated) override {
        return nn::transduction_accuracy(task_, *model_, seed_, eval_size_, stop, evaluated);
    }
    double chance() const override { return 0; }
    std::optional<SeqHeatmap> heatmap() override {  // held-out sequence 0 of batch 0
        if (!attention_) return std::nullopt;
        nn::Seq2SeqBatch b = nn::transduction_batch(task_, 1, seed_, 1, 0);
        SeqHeatmap h;
        Tensor<float> alpha;
        const auto decoded = model_->greedy_decode(b.source, b.lengths, task_.bos(), task_.eos(), task_.max_len + 1, &alpha)[0];
        h.source.assign(b.sources[0].begin(), b.sources[0].end());
        h.expected.assign(b.targets[0].begin(), b.targets[0].end());
        h.output.assign(decoded.begin(), decoded.end());
        if (static_cast<int64_t>(decoded.size()) < alpha.dim(1)) h.output.push_back(static_cast<double>(task_.eos()));
        const int64_t steps = static_cast<int64_t>(h.output.size()), S = alpha.dim(2);
        h.alpha = Tensor<float>({steps, S});
        std::copy_n(alpha.data.begin(), steps * S, h.alpha.data.begin());
        h.eos = task_.eos();
        return h;
    }

private:
    nn::TransductionTask task_;
    int64_t batch_, eval_size_;
    uint32_t seed_;
    bool attention_;
    std::unique_ptr<nn::Seq2Seq> model_;
};

class ClassifyRun : public TaskRun {
public:
    explicit ClassifyRun(const TrainConfig &cfg)
        : batch_(cfg.batch), eval_size_(cfg.seq.eval_size), seed_(cfg.lm.stack.seed), model_(shape(cfg), {cfg.batch, cfg.seq.max_len}) {
        task_.vocab = cfg.seq.vocab, task_.min_len = cfg.seq.min_len, task_.max_len = cfg.seq.max_len;
    }
    std::vector<nn::Param> params() override { return model_.params(); }
    void set_stochastic(bool on) override { model_.set_stochastic(on); }
    double train_step(uint64_t index) override {
        model_.set_mask_draw(index);
        return model_.loss(nn::count_batch(task_, batch_, seed_, 0, index), true);
    }
    double accuracy(const std::function<bool()> &stop, int64_t *evaluated) override {
        constexpr int64_t kEvalBatch = 64;
        int64_t hits = 0, done = 0;
        for (int64_t index = 0; done < eval_size_ && !(done > 0 && stop()); index++) {
            const int64_t n = std::min(kEvalBatch, eval_size_ - done);
            nn::ClassifyBatch b = nn::count_batch(task_, n, seed_, 1, static_cast<uint64_t>(index));
            const std::vector<int32_t> predicted = model_.predict(b);
            for (int64_t i = 0; i < n; i++) hits += predicted[i] == b.labels[i];
            done += n;
        }
        *evaluated = done;
        return static_cast<double>(hits) / static_cast<double>(done);
    }
    double chance() const override { return 1.0 / nn::CountTask::kClasses; }

private:
    static ClassifierShape shape(const TrainConfig &cfg) {
        ClassifierShape s;
        s.stack = cfg.lm.stack;
        s.vocab = cfg.seq.vocab, s.classes = nn::CountTask::kClasses, s.pool = cfg.seq.pool;
        s.front = cfg.seq.front, s.projection_features = cfg.seq.projection_features, s.projection_seed = cfg.seq.projection_seed;
        return s;
    }
    nn::CountTask task_;
    int64_t batch_, eval_size_;
    uint32_t seed_;
    SequenceClassifier model_;
};

// The memory guard (runtime/memory_guard.h) on the task's model before anything is allocated: the stack over
// max_len + 1 steps (encoder and decoder for reverse and sort, whose input is a one-hot of the task's symbols).
void check_seq_task_memory(const TrainConfig &cfg) {
    ModelConfig c(cfg.lm.stack, {cfg.batch, cfg.seq.max_len + 1, false, 0, "training"});
    MemoryShape shape;
    shape.weight_copies = 3;  // nn::Layer models keep the gradient too
    if (is_transduction(cfg.seq.task)) {
        nn::TransductionTask task;
        task.vocab = cfg.seq.vocab;
        shape.stacks = 2, c.input = task.symbols();
    }
    if (is_classifier(cfg.seq.task) && cfg.seq.front == "projection") {  // the projected batch, the bottleneck (+ grad, Adam)
        const double N = static_cast<double>(cfg.seq.projection_features);
        shape.extra_floats = static_cast<double>(cfg.seq.max_len + 1) * static_cast<double>(cfg.batch) * N +
                             4 * N * static_cast<double>(cfg.lm.stack.input);
    }
    check_run_memory(c, false, 0, shape);
}

// The run's summary from its last epoch (none yet: no attributes).
void set_final_attrs(SeqResults &results, double best) {
    if (results.epochs.empty()) return;
    const SeqEpoch &last = results.epochs.back();
    results.attrs["steps"] = static_cast<int64_t>(last.step), results.attrs["seconds"] = last.seconds;
    results.attrs["final_accuracy"] = last.accuracy, results.attrs["best_accuracy"] = best;
}

// The keys of distillation's settings, which only a teacher uses.
const std::vector<std::string> kDistillSettings = {"distill_weight", "distill_temperature", "distill_mix"};

// The classifier's keys that must match to resume: classify-text's min_count, and the front's (none for the
// embedding front: its checkpoints from before these keys resume).
std::string classifier_identity(const TrainConfig &cfg) {
    std::string text = cfg.seq.task == "classify-text" ? "min_count=" + std::to_string(cfg.seq.min_count) + ";" : "";
    if (!cfg.seq.teacher.empty()) {  // distillation (none: the identity of checkpoints from before it)
        text += "teacher=" + cfg.seq.teacher + ";";
        for (const std::string &key : kDistillSettings) text += key + "=" + find_train_key(key)->get(cfg) + ";";
    }
    if (!is_classifier(cfg.seq.task) || cfg.seq.front == "embedding") return text;
    return text + "front=" + cfg.seq.front + ";projection_features=" + std::to_string(cfg.seq.projection_features) +
           ";projection_seed=" + std::to_string(cfg.seq.projection_seed) + ";";
}

// "embedding", or "projection N=512 seed=0".
std::string front_text(const TrainConfig &cfg) {
    if (cfg.seq.front != "projection") return cfg.seq.front;
    return "projection N=" + std::to_string(cfg.seq.projection_features) + " seed=" + std::to_string(cfg.seq.projection_seed);
}

const char *metric_of(const TrainConfig &cfg) { return is_transduction(cfg.seq.task) ? "exact_match" : "accuracy"; }

int64_t parameter_count(const std::vector<nn::Param> &params) {
    int64_t n = 0;
    for (auto &p : params) n += static_cast<int64_t>(p.value->size());
    return n;
}

// The results file's attributes known before training.
std::map<std::string, Attr> run_attrs(const TrainConfig &cfg, const TaskRun &run, int64_t n_params) {
    const bool transduction = is_transduction(cfg.seq.task);
    const MachineInfo machine = machine_info();
    return {{"task", cfg.seq.task},
            {"metric", std::string(metric_of(cfg))},
            {"chance", run.chance()},
            {"model", cfg.lm.stack.model},
            {"attention", std::string(transduction ? (attention_on(cfg) ? "on" : "off") : "-")},
            {"config", config_text(cfg)},
            {"parameters", n_params},
            {"load_start", load_average()},
            {"host", machine.host},
            {"cpu_model", machine.cpu_model},
            {"cores", machine.cores}};
}

void print_task_line(const TrainConfig &cfg, const TaskRun &run, const std::map<std::string, Attr> &attrs, std::ostream &log) {
    const bool transduction = is_transduction(cfg.seq.task);
    const std::string attention = std::get<std::string>(attrs.at("attention"));
    if (run.describe().empty())
        log << "task " << cfg.seq.task << ": lengths " << cfg.seq.min_len << ".." << cfg.seq.max_len << ", vocab " << cfg.seq.vocab;
    log << run.describe() << "; model " << cfg.lm.stack.model
        << (transduction ? " (attention " + attention + ")" : " (front " + front_text(cfg) + ", pool " + cfg.seq.pool + ")")
        << " " << cfg.lm.stack.layers << " x " << cfg.lm.stack.hidden << ", " << std::get<int64_t>(attrs.at("parameters"))
        << " parameters; batch " << cfg.batch << ", " << cfg.epochs << " epochs x " << cfg.max_batches
        << " steps; held-out " << metric_of(cfg) << " of " << cfg.seq.eval_size << " sequences\n";
}

// The training loop: epochs of steps, each epoch ended by a held-out evaluation, the results file and the
// checkpoint. It starts fresh or where the checkpoint left it (then the same command goes on bit-identically).
class SeqTraining {
public:
    SeqTraining(const TrainConfig &cfg, TaskRun &run, SeqResults &results, std::ostream &log)
        : cfg_(cfg), run_(run), results_(results), log_(log), params_(run.params()),
          adam_({cfg.sgd.lr, 0.9, 0.999, 1e-8, cfg.sgd.clip_norm, cfg.sgd.weight_decay}) {
        at_.identity = identity(cfg) + classifier_identity(cfg);
        lock_ = prepare_run_files(cfg);
        if (!cfg.checkpoint.empty() && std::filesystem::exists(cfg.checkpoint)) {
            at_ = read_seq_checkpoint(cfg.checkpoint, at_.identity, params_);
            at_.int8.clear(), at_.int8_calibration.clear();  // training moves the parameters: their calibration lapses
            adam_.set_state(at_.adam);
            results_.epochs = at_.history;
            log << "resuming from " << cfg.checkpoint << ": epoch " << at_.epoch + 1 << ", step " << at_.step << "\n";
        }
        at_.config = config_text(cfg);  // resumable keys (epochs, paths) as now
        start_ = Clock::now(), seconds_before_ = at_.seconds;
    }

    void run() {
        const bool reached = !at_.history.empty() && at_.history.back().accuracy >= cfg_.seq.target_accuracy;
        for (int64_t epoch = at_.epoch; epoch < cfg_.epochs && !reached; epoch++) {
            train_epoch(epoch);
            if (at_.epoch_steps == 0) break;
            if (end_epoch(epoch)) break;
        }
        if (!results_.heatmap) results_.heatmap = run_.heatmap();  // a finished run resumed: nothing trained
        set_final_attrs(results_, at_.best);
    }

private:
    double seconds() const { return seconds_before_ + std::chrono::duration<double>(Clock::now() - start_).count(); }
    bool out_of_time() const { return cfg_.seq.time_limit > 0 && seconds() >= cfg_.seq.time_limit; }
    int64_t total_steps() const { return cfg_.epochs * cfg_.max_batches; }

    void save() {
        if (cfg_.checkpoint.empty()) return;
        require_finite_params(params_, at_.step, cfg_.checkpoint);
        at_.seconds = seconds(), at_.adam = adam_.state();
        write_seq_checkpoint(cfg_.checkpoint, at_, params_);
    }

    void train_epoch(int64_t epoch) {
        run_.set_stochastic(true);
        while (at_.epoch_steps < cfg_.max_batches && !out_of_time()) {
            at_.step++, at_.epoch_steps++;
            const double decay = 1.0 - static_cast<double>(at_.step - 1) / static_cast<double>(total_steps());
            adam_.set_lr(cfg_.sgd.lr * std::max(0.05, decay));
            const double loss = run_.train_step(static_cast<uint64_t>(at_.step));
            require_finite("training loss", loss, at_.step, cfg_.checkpoint);
            at_.epoch_loss += loss;
            adam_.step(params_);
            if (cfg_.checkpoint_every > 0 && at_.step % cfg_.checkpoint_every == 0 && at_.epoch_steps < cfg_.max_batches)
                save();
            if (seconds() - last_log_ >= cfg_.log_seconds) log_progress(epoch);
        }
    }

    void log_progress(int64_t epoch) {
        last_log_ = seconds();
        char line[256];
        std::snprintf(line, sizeof line, "epoch %lld/%lld  step %lld/%lld | %.1f steps/s | loss %.4f | lr %.3g | %.0f s",
                      (long long)(epoch + 1), (long long)cfg_.epochs, (long long)at_.step, (long long)total_steps(),
                      static_cast<double>(at_.step) / last_log_, at_.epoch_loss / static_cast<double>(at_.epoch_steps),
                      adam_.lr(), last_log_);
        log_ << line << "\n" << std::flush;
    }

    // Held-out evaluation, the epoch's record, the results file and the checkpoint; true: stop training.
    bool end_epoch(int64_t epoch) {
        run_.set_stochastic(false);
        SeqEpoch rec;
        rec.step = static_cast<double>(at_.step), rec.lr = adam_.lr();
        rec.train_loss = at_.epoch_loss / static_cast<double>(at_.epoch_steps);
        int64_t evaluated = 0;
        rec.accuracy = run_.accuracy([this] { return out_of_time(); }, &evaluated);
        if (evaluated < cfg_.seq.eval_size)
            log_ << "held-out evaluation cut at the time limit (" << cfg_.seq.time_limit << " s) after " << evaluated << " of "
                 << cfg_.seq.eval_size << " sequences\n";
        rec.seconds = seconds();
        at_.best = std::max(at_.best, rec.accuracy);
        results_.epochs.push_back(rec);
        char line[256];
        std::snprintf(line, sizeof line, "epoch %lld done: step %lld  %.1f s | train loss %.4f | held-out %s %.4f",
                      (long long)(epoch + 1), (long long)at_.step, rec.seconds, rec.train_loss, metric_of(cfg_), rec.accuracy);
        log_ << line << "\n" << std::flush;
        set_final_attrs(results_, at_.best);
        results_.attrs["load_end"] = load_average();
        results_.heatmap = run_.heatmap();
        if (!cfg_.results.empty()) write_seq_results(cfg_.results, results_);
        at_.epoch = epoch + 1, at_.epoch_steps = 0, at_.epoch_loss = 0, at_.history = results_.epochs;
        save();
        return rec.accuracy >= cfg_.seq.target_accuracy || out_of_time();
    }

    const TrainConfig &cfg_;
    TaskRun &run_;
    SeqResults &results_;
    std::ostream &log_;
    const std::vector<nn::Param> params_;
    nn::Adam adam_;
    SeqCheckpoint at_;  // where the run stands
    std::unique_ptr<WriterLock> lock_;
    Clock::time_point start_;
    double seconds_before_ = 0, last_log_ = -1e9;
};

}  // namespace

TrainConfig task_defaults(const std::string &task) {
    TrainConfig c;
    c.seq.task = task;
    if (task == "lm") return c;
    if (!is_transduction(task) && !is_classifier(task))
        fail("unknown task '", task, "' (known: lm, reverse, sort, classify, classify-text)");
    c.batch = 32, c.max_batches = task == "classify-text" ? 0 : 100;
    c.sgd.lr = 3e-3, c.sgd.clip_norm = 5;
    c.lm.stack.pooling = "fo";
    if (is_transduction(task)) {
        c.lm.stack.model = "encdec", c.lm.stack.window = 4, c.lm.stack.hidden = 128, c.lm.stack.layers = 2;
        c.epochs = 20, c.seq.time_limit = 300, c.seq.target_accuracy = 0.99, c.seq.eval_size = 256;
    } else {
        c.lm.stack.model = "qrnn-dense", c.lm.stack.window = 2, c.lm.stack.input = 32, c.lm.stack.hidden = 64;
        c.lm.stack.layers = 2, c.epochs = 10, c.seq.eval_size = 512;
    }
    return c;
}

namespace {

// The data keys: the synthetic tasks make their own data, classify-text reads files (and its lengths, vocabulary
// and held-out size come from them).
void validate_task_data(const TrainConfig &cfg, const TrainConfig &defaults) {
    const std::string &task = cfg.seq.task;
    if (task == "classify-text") {
        for (auto &[key, value] : {std::pair{"train", cfg.train}, {"valid", cfg.valid}})
            if (value.empty())
                fail("key '", key, "': task classify-text needs a ", key, " file (--data DIR holding train.tsv, valid.tsv and "
                     "optionally test.tsv, or --train FILE --valid FILE [--test FILE])");
        refuse_unused_keys(cfg, defaults, {"vocab", "min_len", "max_len", "eval_size"}, "the synthetic tasks only; classify-text's "
                           "come from its files");
        if (!(cfg.seq.distill_weight >= 0 && cfg.seq.distill_weight <= 1))
            fail("key 'distill_weight': must be in [0, 1], got ", cfg.seq.distill_weight);
        if (!(cfg.seq.distill_temperature > 0 && std::isfinite(cfg.seq.distill_temperature)))
            fail("key 'distill_temperature': must be > 0, got ", cfg.seq.distill_temperature);
        if (!(cfg.seq.distill_mix >= 0 && cfg.seq.distill_mix <= 1))
            fail("key 'distill_mix': must be in [0, 1], got ", cfg.seq.distill_mix);
        if (cfg.seq.teacher.empty())
            refuse_unused_keys(cfg, defaults, kDistillSettings, "distillation only: set 'teacher'");
        else
            for (const std::string &file : teacher_checkpoints(cfg.seq.teacher))
                if (!std::filesystem::exists(file)) fail("key 'teacher': ", file, ": no such file (a classify-text checkpoint)");
        return;
    }
    for (auto &[key, value] : {std::pair{"train", cfg.train}, {"valid", cfg.valid}, {"test", cfg.test}})
        if (!value.empty()) fail("key '", key, "': task ", task, " generates its own data (no token files)");
    if (cfg.max_batches < 1) fail("key 'max_batches': task ", task, " needs steps per epoch >= 1");
    if (cfg.seq.min_len > cfg.seq.max_len)
        fail("keys 'min_len', 'max_len': min_len ", cfg.seq.min_len, " is above max_len ", cfg.seq.max_len);
    refuse_unused_keys(cfg, defaults, {"min_count", "teacher", "distill_weight", "distill_temperature", "distill_mix"}, "task classify-text only");
}

}  // namespace

void validate_seq_task(const TrainConfig &cfg) {
    const std::string &task = cfg.seq.task, &model = cfg.lm.stack.model;
    if (!is_transduction(task) && !is_classifier(task)) fail("key 'task': '", task, "' is not a sequence task");
    const TrainConfig defaults = task_defaults(task);
    validate_task_data(cfg, defaults);
    if (!(cfg.seq.time_limit >= 0)) fail("key 'time_limit': must be >= 0 (0: none), got ", cfg.seq.time_limit);
    if (!(cfg.seq.target_accuracy > 0 && cfg.seq.target_accuracy <= 1))
        fail("key 'target_accuracy': must be in (0, 1], got ", cfg.seq.target_accuracy);
    if (!(cfg.log_seconds >= 0)) fail("key 'log_seconds': must be >= 0, got ", cfg.log_seconds);
    nn::AdamOptions{cfg.sgd.lr, 0.9, 0.999, 1e-8, cfg.sgd.clip_norm, cfg.sgd.weight_decay}.validate();
    if (task != "classify-text") check_seq_task_memory(cfg);  // classify-text's lengths: its files' (train_seq_task)
    refuse_unused_keys(cfg, defaults, {"bptt", "io_dropout", "tie_weights", "lr_decay", "lr_patience"}, "task lm only");
    ModelConfig training(cfg.lm.stack, {cfg.batch, cfg.seq.max_len});
    training.pass = "training";
    check_model_precision(training);  // e.g. bf16 of a model that trains in f32 only: refused, never run in f32 instead
    if (!is_classifier(task))
        refuse_unused_keys(cfg, defaults, {"pool", "front", "projection_features", "projection_seed"}, "tasks classify and classify-text only");
    else if (cfg.seq.front != "projection")
        for (const char *name : {"projection_features", "projection_seed"}) {
            const TrainKey *k = find_train_key(name);
            if (k->get(cfg) != k->get(defaults))
                fail("key '", name, "': value '", k->get(cfg), "': front ", cfg.seq.front, " does not use it (front projection only)");
        }
    if (is_transduction(task)) {
        if (!is_encdec(model))
            fail("key 'model': task ", task, " trains an encoder-decoder (encdec, encdec-noattn), not '", model, "'");
        if (model == "encdec-noattn" && cfg.seq.attention == "on")
            fail("key 'attention': model 'encdec-noattn' has no attention (model encdec with attention on or off)");
        return;
    }
    if (is_encdec(model))
        fail("key 'model': task ", task, " trains a classifier over a layer stack (qrnn, qrnn-dense, qrnn-bidir, qrnn-bidir-sum, "
             "qrnn-varlen, ...); '", model, "' is an encoder-decoder (tasks reverse, sort)");
    if (!cfg.seq.attention.empty())
        fail("key 'attention': attention needs an encoder; model '", model, "' of task ", task, " has none");
    if (task == "classify" && cfg.seq.vocab < 2) fail("key 'vocab': classify needs tokens A = 0 and B = 1 (vocab >= 2), got ", cfg.seq.vocab);
    const ModelConfig c(cfg.lm.stack, {cfg.batch, cfg.seq.max_len});
    c.validate();
    if (!nn::has_layer_factory(c.model)) nn::make_layer(c, 0);  // throws "model 'X' has no backward pass"
}

SeqResults train_seq_task(const TrainConfig &asked, std::ostream &log) {
    validate_seq_task(asked);
    check_output_files(asked);  // before the model is built
    TrainConfig cfg = asked;
    std::unique_ptr<TaskRun> run;
    if (is_transduction(cfg.seq.task)) run = std::make_unique<TransductionRun>(cfg);
    else if (cfg.seq.task == "classify") run = std::make_unique<ClassifyRun>(cfg);
    else {
        TextClassificationSplits splits = read_text_splits(cfg);
        check_seq_task_memory(text_run_config(cfg, splits));
        auto text = std::make_unique<TextClassifyRun>(cfg, std::move(splits));
        cfg = text->config();
        run = std::move(text);
    }
    SeqResults results;
    results.attrs = run_attrs(cfg, *run, parameter_count(run->params()));
    print_task_line(cfg, *run, results.attrs, log);
    SeqTraining training(cfg, *run, results, log);
    training.run();
    run->finish(results);
    if (!cfg.results.empty() && !results.epochs.empty()) write_seq_results(cfg.results, results);
    return results;
}

}  // namespace qrnn::lm
