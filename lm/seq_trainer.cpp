#include "lm/seq_trainer.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "core/error.h"
#include "lm/run_files.h"
#include "lm/seq_checkpoint.h"
#include "lm/seq_classifier.h"
#include "nn/optimizer.h"
#include "nn/seq2seq.h"
#include "runtime/machine_info.h"
#include "runtime/memory_guard.h"

namespace qrnn::lm {
namespace {

using Clock = std::chrono::steady_clock;

bool is_transduction(const std::string &task) { return task == "reverse" || task == "sort"; }
bool is_encdec(const std::string &model) { return model == "encdec" || model == "encdec-noattn"; }
bool attention_on(const TrainConfig &cfg) {
    return cfg.seq.attention.empty() ? cfg.lm.stack.model == "encdec" : cfg.seq.attention == "on";
}

double load_average() {  // 1-minute load average, NaN where /proc/loadavg is missing
    double load = NAN;
    std::ifstream("/proc/loadavg") >> load;
    return load;
}

// A task's data and model behind the training loop.
class TaskRun {
public:
    virtual ~TaskRun() = default;
    virtual std::vector<nn::Param> params() = 0;
    virtual void set_stochastic(bool on) = 0;
    // Loss of training batch `index` with the masks of draw `index` (every batch starts at time 0: without a
    // draw of its own each step would repeat the first step's masks); every gradient of it set.
    virtual double train_step(uint64_t index) = 0;
    // Held-out, in batches; ends early when stop() says so after a batch (*evaluated: the sequences evaluated).
    virtual double accuracy(const std::function<bool()> &stop, int64_t *evaluated) = 0;
    virtual std::optional<SeqHeatmap> heatmap() { return std::nullopt; }
};

class TransductionRun : public TaskRun {
public:
    explicit TransductionRun(const TrainConfig &cfg)
        : batch_(cfg.batch), eval_size_(cfg.seq.eval_size), seed_(cfg.lm.stack.seed), attention_(attention_on(cfg)) {
        task_.sort = cfg.seq.task == "sort";
        task_.vocab = cfg.seq.vocab, task_.min_len = cfg.seq.min_len, task_.max_len = cfg.seq.max_len;
        ModelConfig base = cfg.lm.stack;
        base.model = "encdec", base.batch = cfg.batch, base.seq = task_.max_len + 1, base.input = task_.symbols();
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
        : batch_(cfg.batch), eval_size_(cfg.seq.eval_size), seed_(cfg.lm.stack.seed), model_(shape(cfg)) {
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

private:
    static ClassifierShape shape(const TrainConfig &cfg) {
        ClassifierShape s;
        s.stack = cfg.lm.stack;
        s.stack.batch = cfg.batch, s.stack.seq = cfg.seq.max_len;
        s.vocab = cfg.seq.vocab, s.classes = nn::CountTask::kClasses, s.pool = cfg.seq.pool;
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
    ModelConfig c = cfg.lm.stack;
    c.batch = cfg.batch, c.seq = cfg.seq.max_len + 1, c.pass = "training";
    MemoryShape shape;
    shape.weight_copies = 3;  // nn::Layer models keep the gradient too
    if (is_transduction(cfg.seq.task)) {
        nn::TransductionTask task;
        task.vocab = cfg.seq.vocab;
        shape.stacks = 2, c.input = task.symbols();
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

}  // namespace

TrainConfig task_defaults(const std::string &task) {
    TrainConfig c;
    c.seq.task = task;
    if (task == "lm") return c;
    if (!is_transduction(task) && task != "classify") fail("unknown task '", task, "' (known: lm, reverse, sort, classify)");
    c.batch = 32, c.max_batches = 100;
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

void validate_seq_task(const TrainConfig &cfg) {
    const std::string &task = cfg.seq.task, &model = cfg.lm.stack.model;
    if (!is_transduction(task) && task != "classify") fail("key 'task': '", task, "' is not a synthetic sequence task");
    for (auto &[key, value] : {std::pair{"train", cfg.train}, {"valid", cfg.valid}, {"test", cfg.test}})
        if (!value.empty()) fail("key '", key, "': task ", task, " generates its own data (no token files)");
    if (cfg.max_batches < 1) fail("key 'max_batches': task ", task, " needs steps per epoch >= 1");
    if (cfg.seq.min_len > cfg.seq.max_len)
        fail("keys 'min_len', 'max_len': min_len ", cfg.seq.min_len, " is above max_len ", cfg.seq.max_len);
    if (!(cfg.seq.time_limit >= 0)) fail("key 'time_limit': must be >= 0 (0: none), got ", cfg.seq.time_limit);
    if (!(cfg.seq.target_accuracy > 0 && cfg.seq.target_accuracy <= 1))
        fail("key 'target_accuracy': must be in (0, 1], got ", cfg.seq.target_accuracy);
    if (!(cfg.log_seconds >= 0)) fail("key 'log_seconds': must be >= 0, got ", cfg.log_seconds);
    nn::AdamOptions{cfg.sgd.lr, 0.9, 0.999, 1e-8, cfg.sgd.clip_norm, cfg.sgd.weight_decay}.validate();
    check_seq_task_memory(cfg);
    const TrainConfig defaults = task_defaults(task);
    refuse_unused_keys(cfg, defaults, {"bptt", "io_dropout", "tie_weights", "lr_decay", "lr_patience"}, "task lm only");
    if (task != "classify") refuse_unused_keys(cfg, defaults, {"pool"}, "task classify only");
    if (is_transduction(task)) {
        if (!is_encdec(model))
            fail("key 'model': task ", task, " trains an encoder-decoder (encdec, encdec-noattn), not '", model, "'");
        if (model == "encdec-noattn" && cfg.seq.attention == "on")
            fail("key 'attention': model 'encdec-noattn' has no attention (model encdec with attention on or off)");
        return;
    }
    if (is_encdec(model))
        fail("key 'model': task classify trains a classifier over a layer stack (qrnn, qrnn-dense, qrnn-bidir, qrnn-bidir-sum, "
             "qrnn-varlen, ...); '", model, "' is an encoder-decoder (tasks reverse, sort)");
    if (!cfg.seq.attention.empty())
        fail("key 'attention': attention needs an encoder; model '", model, "' of task classify has none");
    if (cfg.seq.vocab < 2) fail("key 'vocab': classify needs tokens A = 0 and B = 1 (vocab >= 2), got ", cfg.seq.vocab);
    ModelConfig c = cfg.lm.stack;
    c.batch = cfg.batch, c.seq = cfg.seq.max_len;
    c.validate();
    if (!nn::has_layer_factory(c.model)) nn::make_layer(c, 0);  // throws "model 'X' has no backward pass"
}

SeqResults train_seq_task(const TrainConfig &cfg, std::ostream &log) {
    validate_seq_task(cfg);
    check_output_files(cfg);  // before the model is built
    const std::string &task = cfg.seq.task;
    const bool transduction = is_transduction(task);
    std::unique_ptr<TaskRun> run;
    if (transduction) run = std::make_unique<TransductionRun>(cfg);
    else run = std::make_unique<ClassifyRun>(cfg);
    const std::vector<nn::Param> params = run->params();
    int64_t n_params = 0;
    for (auto &p : params) n_params += static_cast<int64_t>(p.value->size());
    const std::string metric = transduction ? "exact_match" : "accuracy";
    const std::string attention = transduction ? (attention_on(cfg) ? "on" : "off") : "-";
    log << "task " << task << ": lengths " << cfg.seq.min_len << ".." << cfg.seq.max_len << ", vocab " << cfg.seq.vocab
        << "; model " << cfg.lm.stack.model << (transduction ? " (attention " + attention + ")" : " (pool " + cfg.seq.pool + ")")
        << " " << cfg.lm.stack.layers << " x " << cfg.lm.stack.hidden << ", " << n_params << " parameters; batch "
        << cfg.batch << ", " << cfg.epochs << " epochs x " << cfg.max_batches << " steps; held-out " << metric << " of "
        << cfg.seq.eval_size << " sequences\n";

    SeqResults results;
    const MachineInfo machine = machine_info();
    results.attrs = {{"task", task},
                     {"metric", metric},
                     {"chance", transduction ? 0.0 : 1.0 / nn::CountTask::kClasses},
                     {"model", cfg.lm.stack.model},
                     {"attention", attention},
                     {"config", config_text(cfg)},
                     {"parameters", n_params},
                     {"load_start", load_average()},
                     {"host", machine.host},
                     {"cpu_model", machine.cpu_model},
                     {"cores", machine.cores}};
    nn::Adam adam({cfg.sgd.lr, 0.9, 0.999, 1e-8, cfg.sgd.clip_norm, cfg.sgd.weight_decay});
    // Where the run stands: fresh, or as its checkpoint left it (then the same command goes on bit-identically).
    SeqCheckpoint at;
    at.identity = identity(cfg);
    const std::unique_ptr<WriterLock> lock = prepare_run_files(cfg);
    if (!cfg.checkpoint.empty() && std::filesystem::exists(cfg.checkpoint)) {
        at = read_seq_checkpoint(cfg.checkpoint, at.identity, params);
        adam.set_state(at.adam);
        results.epochs = at.history;
        log << "resuming from " << cfg.checkpoint << ": epoch " << at.epoch + 1 << ", step " << at.step << "\n";
    }
    at.config = config_text(cfg);  // resumable keys (epochs, paths) as now
    const int64_t total = cfg.epochs * cfg.max_batches;
    const auto start = Clock::now();
    const double seconds_before = at.seconds;
    auto seconds = [&] { return seconds_before + std::chrono::duration<double>(Clock::now() - start).count(); };
    auto out_of_time = [&] { return cfg.seq.time_limit > 0 && seconds() >= cfg.seq.time_limit; };
    auto save = [&] {
        if (cfg.checkpoint.empty()) return;
        require_finite_params(params, at.step, cfg.checkpoint);
        at.seconds = seconds(), at.adam = adam.state();
        write_seq_checkpoint(cfg.checkpoint, at, params);
    };
    const bool reached = !at.history.empty() && at.history.back().accuracy >= cfg.seq.target_accuracy;
    double last_log = -1e9;
    for (int64_t epoch = at.epoch; epoch < cfg.epochs && !reached; epoch++) {
        run->set_stochastic(true);
        while (at.epoch_steps < cfg.max_batches && !out_of_time()) {
            at.step++, at.epoch_steps++;
            adam.set_lr(cfg.sgd.lr * std::max(0.05, 1.0 - static_cast<double>(at.step - 1) / static_cast<double>(total)));
            const double loss = run->train_step(static_cast<uint64_t>(at.step));
            require_finite("training loss", loss, at.step, cfg.checkpoint);
            at.epoch_loss += loss;
            adam.step(params);
            if (cfg.checkpoint_every > 0 && at.step % cfg.checkpoint_every == 0 && at.epoch_steps < cfg.max_batches) save();
            if (seconds() - last_log >= cfg.log_seconds) {
                last_log = seconds();
                char line[256];
                std::snprintf(line, sizeof line, "epoch %lld/%lld  step %lld/%lld | %.1f steps/s | loss %.4f | lr %.3g | %.0f s",
                              (long long)(epoch + 1), (long long)cfg.epochs, (long long)at.step, (long long)total,
                              static_cast<double>(at.step) / last_log, at.epoch_loss / static_cast<double>(at.epoch_steps),
                              adam.lr(), last_log);
                log << line << "\n" << std::flush;
            }
        }
        if (at.epoch_steps == 0) break;
        run->set_stochastic(false);
        SeqEpoch rec;
        rec.step = static_cast<double>(at.step), rec.lr = adam.lr();
        rec.train_loss = at.epoch_loss / static_cast<double>(at.epoch_steps);
        int64_t evaluated = 0;
        rec.accuracy = run->accuracy(out_of_time, &evaluated);
        if (evaluated < cfg.seq.eval_size)
            log << "held-out evaluation cut at the time limit (" << cfg.seq.time_limit << " s) after " << evaluated << " of "
                << cfg.seq.eval_size << " sequences\n";
        rec.seconds = seconds();
        at.best = std::max(at.best, rec.accuracy);
        results.epochs.push_back(rec);
        char line[256];
        std::snprintf(line, sizeof line, "epoch %lld done: step %lld  %.1f s | train loss %.4f | held-out %s %.4f",
                      (long long)(epoch + 1), (long long)at.step, rec.seconds, rec.train_loss, metric.c_str(), rec.accuracy);
        log << line << "\n" << std::flush;
        set_final_attrs(results, at.best);
        results.attrs["load_end"] = load_average();
        results.heatmap = run->heatmap();
        if (!cfg.results.empty()) write_seq_results(cfg.results, results);
        at.epoch = epoch + 1, at.epoch_steps = 0, at.epoch_loss = 0, at.history = results.epochs;
        save();
        if (rec.accuracy >= cfg.seq.target_accuracy || out_of_time()) break;
    }
    if (!results.heatmap) results.heatmap = run->heatmap();  // a finished run resumed: nothing trained
    set_final_attrs(results, at.best);
    return results;
}

}  // namespace qrnn::lm
