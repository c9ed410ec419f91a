#include "lm/trainer.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>

#include "core/error.h"
#include "lm/run_files.h"
#include "lm/train_results.h"
#include "runtime/atomic_file.h"
#include "runtime/machine_info.h"
#include "runtime/memory_guard.h"
#include "runtime/writer_lock.h"


namespace qrnn::lm {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string clock_str(double seconds) {
    char buf[32];
    const int64_t s = static_cast<int64_t>(seconds + 0.5);
    if (s >= 3600) std::snprintf(buf, sizeof buf, "%lldh%02lldm", (long long)(s / 3600), (long long)(s / 60 % 60));
    else std::snprintf(buf, sizeof buf, "%lldm%02llds", (long long)(s / 60), (long long)(s % 60));
    return buf;
}

// The --step_log file: truncated on a fresh run, appended to on a resumed one (steps redone after the checkpoint
// appear twice; the later line is the one that counts).
std::unique_ptr<std::ofstream> open_step_log(const std::string &path, bool resumed) {
    if (path.empty()) return nullptr;
    auto out = std::make_unique<std::ofstream>(path, resumed ? std::ios::app : std::ios::trunc);
    if (!*out) fail(path, ": cannot write the step log (key 'step_log')");
    if (!resumed) *out << "step,epoch,batch,loss,grad_norm,lr\n";
    *out << std::setprecision(17);
    return out;
}

int64_t batches_per_epoch(const BatchStream &train, int64_t max_batches) {
    return max_batches > 0 ? std::min(max_batches, train.batches()) : train.batches();
}

// The parameters before the first update, as a step-0 checkpoint (qrnn eval reads it; as --checkpoint it starts a
// run from them).
void save_initial_model(const std::string &path, CheckpointInfo info, TrainableModel &model, const TrainConfig &cfg) {
    if (info.lr <= 0) info.lr = cfg.sgd.lr;
    model.reset_state(cfg.batch, 0);
    write_checkpoint(path, info, model);
}

}  // namespace

void check_language_model_memory(const TrainConfig &cfg, int64_t vocab) {
    const ModelConfig c(cfg.lm.stack, cfg.lm_run());
    MemoryShape shape;
    const double V = static_cast<double>(vocab), rows = static_cast<double>(cfg.batch) * static_cast<double>(cfg.bptt);
    // the embedding (weights, gradients, a copy), the decoder (weights, gradients, the weights packed for dh and,
    // at a width the tile does not divide, padded copies of the weights and gradients: lm/softmax_decoder.cpp) and
    // its logits, their gradient and its packed copy (at most all rows in one chunk)
    shape.extra_floats = V * (3 * static_cast<double>(c.input) + 5 * static_cast<double>(c.hidden)) + 3 * rows * V;
    check_run_memory(c, false, 0, shape);
}

std::unique_ptr<TrainableModel> make_language_model(const TrainConfig &cfg, int64_t vocab) {
    check_language_model_memory(cfg, vocab);
    LmShape shape = cfg.lm;
    shape.vocab = vocab;
    return std::make_unique<LanguageModel>(shape, cfg.lm_run());
}

double perplexity(TrainableModel &model, const BatchStream &data) {
    model.set_stochastic(false);
    model.reset_state(data.batch(0).B, 0);
    double loss = 0;
    int64_t targets = 0;
    for (int64_t i = 0; i < data.batches(); i++) {
        StepResult r = model.step(data.batch(i), false);
        loss += r.loss;
        targets += r.targets;
    }
    return std::exp(loss / static_cast<double>(targets));
}

void fit(TrainableModel &model, const BatchStream &train, const BatchStream &valid, const FitOptions &opts, CheckpointInfo &state,
         std::ostream &log) {
    nn::Sgd sgd(opts.sgd);
    if (state.lr > 0) sgd.set_lr(state.lr);
    TrainProgress &p = state.progress;
    const int64_t nb = batches_per_epoch(train, opts.max_batches), B = train.batch(0).B;
    const std::vector<nn::Param> params = model.params();
    const auto step_log = open_step_log(opts.step_log, p.step > 0);
    auto save = [&] {
        if (opts.checkpoint.empty()) return;
        require_finite_params(params, p.step, opts.checkpoint);
        state.lr = sgd.lr();
        write_checkpoint(opts.checkpoint, state, model);
    };
    const auto run_start = Clock::now();
    int64_t run_batches = 0;
    auto last_log = Clock::now() - std::chrono::hours(1);
    while (p.epoch < opts.epochs) {
        model.set_stochastic(true);
        if (p.batch == 0) {  // a fresh epoch: state from zeros, masks from where the last epoch's ended
            model.reset_state(B, p.epoch * nb * train.batch(0).T);
            p.loss = p.rnn_ms = p.softmax_ms = p.optim_ms = p.seconds = 0, p.targets = 0;
        }
        for (; p.batch < nb;) {
            const auto start = Clock::now();
            model.zero_grads();
            StepResult r = model.step(train.batch(p.batch), true);
            const auto opt_start = Clock::now();
            // The model's gradients are of the summed loss: the optimizer steps on the mean per target token.
            const double lr = sgd.lr(), grad_norm = sgd.step(params, 1.0 / static_cast<double>(r.targets)).grad_norm;
            p.optim_ms += seconds_since(opt_start) * 1e3;
            if (step_log)
                *step_log << p.step + 1 << "," << p.epoch + 1 << "," << p.batch + 1 << "," << r.loss / r.targets << ","
                          << grad_norm << "," << lr << "\n" << std::flush;
            p.loss += r.loss, p.targets += r.targets, p.rnn_ms += r.rnn_ms, p.softmax_ms += r.softmax_ms;
            p.seconds += seconds_since(start);
            p.batch++, p.step++, run_batches++;
            require_finite("training loss", r.loss, p.step, opts.checkpoint);
            const bool last = p.batch == nb && p.epoch + 1 == opts.epochs;
            if (seconds_since(last_log) >= opts.log_seconds || last) {
                last_log = Clock::now();
                const double per_batch = seconds_since(run_start) / static_cast<double>(run_batches);
                const int64_t left = (opts.epochs - p.epoch - 1) * nb + (nb - p.batch);
                char line[256];
                std::snprintf(line, sizeof line,
                              "epoch %lld/%lld  batch %lld/%lld  step %lld | %.0f tok/s | loss %.3f  ppl %.1f | lr %g | ETA %s",
                              (long long)(p.epoch + 1), (long long)opts.epochs, (long long)p.batch, (long long)nb,
                              (long long)p.step, static_cast<double>(p.targets) / p.seconds, p.loss / p.targets,
                              std::exp(p.loss / p.targets), sgd.lr(), clock_str(per_batch * left).c_str());
                log << line << "\n" << std::flush;
            }
            if (opts.checkpoint_every > 0 && p.step % opts.checkpoint_every == 0 && p.batch < nb) save();
        }
        EpochRecord rec;
        rec.train_ppl = std::exp(p.loss / static_cast<double>(p.targets));
        rec.lr = sgd.lr();
        rec.seconds = p.seconds;
        rec.tokens_per_s = static_cast<double>(p.targets) / p.seconds;
        rec.rnn_ms = p.rnn_ms / nb, rec.softmax_ms = p.softmax_ms / nb, rec.optim_ms = p.optim_ms / nb;
        rec.val_ppl = perplexity(model, valid);
        require_finite("validation perplexity", rec.val_ppl, p.step, opts.checkpoint);
        const bool decayed = state.plateau.observe(std::log(rec.val_ppl), sgd);
        if (state.best_epoch == 0 || rec.val_ppl < p.history.at(static_cast<size_t>(state.best_epoch - 1)).val_ppl) {
            state.best_params.clear();
            for (auto &param : params) state.best_params.push_back(*param.value);
            state.best_epoch = p.epoch + 1;
        }
        p.history.push_back(rec);
        char line[256];
        std::snprintf(line, sizeof line,
                      "epoch %lld done: train ppl %.2f  valid ppl %.2f | %.0f tok/s | per batch: rnn %.1f ms, softmax %.1f ms, "
                      "optim %.1f ms%s",
                      (long long)(p.epoch + 1), rec.train_ppl, rec.val_ppl, rec.tokens_per_s, rec.rnn_ms, rec.softmax_ms,
                      rec.optim_ms, decayed ? " | lr decayed" : "");
        log << line << "\n" << std::flush;
        p.epoch++, p.batch = 0;
        save();
        if (opts.on_epoch) opts.on_epoch(p.history);
    }
}

namespace {
// The corpus of a run: the vocabulary from the training file and its token files, read before training (a bad
// test file is an error now, not after the last epoch).
struct LmData {
    std::vector<int32_t> train, valid, test;
    Vocabulary vocab;
};

LmData read_lm_data(const TrainConfig &cfg) {
    LmData d;
    d.vocab = Vocabulary::from_file(cfg.train, &d.train);  // one read: the file may be a pipe
    d.valid = read_tokens(cfg.valid, d.vocab);
    if (!cfg.test.empty()) {
        d.test = read_tokens(cfg.test, d.vocab);
        BatchStream(d.test, cfg.batch, cfg.bptt, cfg.test);
    }
    return d;
}

// Where the run starts: fresh, or the checkpoint's progress (checked against this config and vocabulary).
CheckpointInfo starting_point(const TrainConfig &cfg, const Vocabulary &vocab, const BatchStream &train) {
    CheckpointInfo start;
    start.identity = identity(cfg);
    start.config = config_text(cfg);
    start.vocab = vocab.words();
    start.plateau = cfg.plateau;
    if (cfg.checkpoint.empty() || !std::filesystem::exists(cfg.checkpoint)) return start;
    CheckpointInfo saved = read_checkpoint_info(cfg.checkpoint);
    validate_progress(cfg.checkpoint, saved, batches_per_epoch(train, cfg.max_batches), std::max(cfg.epochs, saved.progress.epoch));
    require_same_identity(cfg.checkpoint, saved.identity, start.identity);
    if (saved.vocab != start.vocab) fail(cfg.checkpoint, ": checkpoint vocabulary differs from ", cfg.train, "'s");
    saved.config = config_text(cfg);  // resumable keys (epochs, paths) as now
    return saved;
}

// The model's tensors and best parameters from the checkpoint (step 0 too: a checkpoint written before training,
// --save_initial's, holds the parameters to start from).
void resume_model(const TrainConfig &cfg, TrainableModel &model, CheckpointInfo &start, std::ostream &log) {
    model.reset_state(cfg.batch, 0);
    load_checkpoint_model(cfg.checkpoint, model);
    start.best_params = read_best_params(cfg.checkpoint, model);
    log << "resuming from " << cfg.checkpoint << ": epoch " << start.progress.epoch + 1 << ", batch "
        << start.progress.batch << ", step " << start.progress.step << "\n";
}

FitOptions fit_options(const TrainConfig &cfg) {
    FitOptions opts;
    opts.epochs = cfg.epochs, opts.max_batches = cfg.max_batches, opts.checkpoint_every = cfg.checkpoint_every;
    opts.sgd = cfg.sgd, opts.checkpoint = cfg.checkpoint, opts.log_seconds = cfg.log_seconds, opts.step_log = cfg.step_log;
    return opts;
}

TrainResults results_header(const TrainConfig &cfg, int64_t vocab, int64_t n_params, const TrainOutcome &out) {
    TrainResults results;
    results.attrs = {{"config", config_text(cfg)},
                     {"model", cfg.lm.stack.model},
                     {"vocab", vocab},
                     {"parameters", n_params},
                     {"unigram_val_ppl", out.unigram_val_ppl},
                     {"test_ppl", out.test_ppl}};
    const MachineInfo machine = machine_info();
    results.attrs["host"] = machine.host, results.attrs["cpu_model"] = machine.cpu_model, results.attrs["cores"] = machine.cores;
    return results;
}

// The results file with the epochs so far and the best validation epoch ("" results path: nothing).
void write_results_file(const std::string &path, TrainResults &results, const std::vector<EpochRecord> &history) {
    if (path.empty()) return;
    results.epochs = history;
    size_t best = 0;
    for (size_t e = 0; e < history.size(); e++)
        if (history[e].val_ppl < history[best].val_ppl) best = e;
    results.attrs["best_val_ppl"] = history.empty() ? double(INFINITY) : history[best].val_ppl;
    results.attrs["best_epoch"] = static_cast<int64_t>(history.empty() ? 0 : best + 1);
    write_train_results(path, results);
}

// Test perplexity on the best validation epoch's parameters (none: a checkpoint from before they were kept).
void test_best(const TrainConfig &cfg, const LmData &data, const CheckpointInfo &start, TrainableModel &model, TrainOutcome &out,
               TrainResults &results) {
    if (!start.best_params.empty()) set_params(model, start.best_params);
    out.test_ppl = perplexity(model, BatchStream(data.test, cfg.batch, cfg.bptt, cfg.test));
    results.attrs["test_ppl"] = out.test_ppl;
    out.test_params = start.best_params.empty() ? "final" : "best validation epoch";
    results.attrs["test_params"] = out.test_params;
}
}  // namespace

TrainOutcome train_language_model(const TrainConfig &cfg, std::ostream &log) {
    cfg.validate();
    check_token_files(cfg);
    check_output_files(cfg);
    const LmData data = read_lm_data(cfg);
    const BatchStream train(data.train, cfg.batch, cfg.bptt, cfg.train), valid(data.valid, cfg.batch, cfg.bptt, cfg.valid);
    TrainOutcome out;
    out.unigram_val_ppl = unigram_perplexity(data.train, data.valid, data.vocab.size());
    log << "data: " << data.train.size() << " training tokens (" << cfg.train << "), " << data.valid.size()
        << " validation tokens (" << cfg.valid << "), vocabulary " << data.vocab.size() << "; unigram validation perplexity "
        << std::lround(out.unigram_val_ppl) << "\n";

    const std::unique_ptr<WriterLock> lock = prepare_run_files(cfg);
    CheckpointInfo start = starting_point(cfg, data.vocab, train);
    const bool resuming = !cfg.checkpoint.empty() && std::filesystem::exists(cfg.checkpoint);
    std::unique_ptr<TrainableModel> model = make_language_model(cfg, data.vocab.size());
    int64_t n_params = 0;
    for (auto &p : model->params()) n_params += static_cast<int64_t>(p.value->size());
    if (resuming) {
        resume_model(cfg, *model, start, log);
        out.resumed_at_step = start.progress.step;
    }
    log << "model: " << cfg.lm.stack.model << " " << cfg.lm.stack.layers << " x " << cfg.lm.stack.hidden << ", embedding "
        << cfg.lm.stack.input << ", " << n_params << " parameters; batch " << cfg.batch << " x bptt " << cfg.bptt << ", "
        << batches_per_epoch(train, cfg.max_batches) << " batches per epoch\n";

    TrainResults results = results_header(cfg, data.vocab.size(), n_params, out);
    FitOptions opts = fit_options(cfg);
    opts.on_epoch = [&](const std::vector<EpochRecord> &history) { write_results_file(cfg.results, results, history); };
    if (!cfg.save_initial.empty() && start.progress.step == 0) save_initial_model(cfg.save_initial, start, *model, cfg);
    fit(*model, train, valid, opts, start, log);
    out.history = start.progress.history;
    out.best_val_ppl = INFINITY;
    for (auto &r : out.history) out.best_val_ppl = std::min(out.best_val_ppl, r.val_ppl);
    out.best_epoch = start.best_epoch;
    if (!cfg.test.empty()) test_best(cfg, data, start, *model, out, results);
    write_results_file(cfg.results, results, out.history);
    return out;
}

}  // namespace qrnn::lm
