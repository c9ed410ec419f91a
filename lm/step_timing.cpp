#include "lm/step_timing.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include "core/comma_list.h"
#include "core/error.h"
#include "lm/trainer.h"
#include "runtime/atomic_file.h"
#include "runtime/machine_info.h"

namespace qrnn::lm {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kMaxVocab = int64_t(1) << 24;
double ms_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

std::vector<std::string> split_models(const std::string &value) { return split_comma_list(value, "model name", true); }

// A vocabulary padded with unused words up to `size` (0: as it is); `path` names its file in errors.
Vocabulary padded(const Vocabulary &v, int64_t size, const std::string &path) {
    if (size == 0 || size == v.size()) return v;
    if (size < v.size())
        fail("key 'vocab': value '", size, "': below the ", v.size(), " words of ", path, " (0: the file's vocabulary)");
    std::vector<std::string> words = v.words();
    for (int64_t i = 0; static_cast<int64_t>(words.size()) < size; i++) words.push_back("<pad" + std::to_string(i) + ">");
    return Vocabulary::from_words(std::move(words));
}

// The settings of one entry of `models`: "NAME" (train's precision) or "NAME@PRECISION" (e.g. qrnn@bf16).
TrainConfig config_of(const TrainConfig &train, const std::string &entry) {
    TrainConfig c = train;
    const size_t at = entry.find('@');
    c.lm.stack.model = entry.substr(0, at);
    if (at == std::string::npos) return c;
    const std::string precision = entry.substr(at + 1);
    try {
        find_train_key("precision")->set(c, precision);
    } catch (const Error &e) {
        fail("key 'models': '", entry, "': precision '", precision, "': ", e.what());
    }
    return c;
}

struct TimedModel {
    std::unique_ptr<TrainableModel> model;
    std::vector<nn::Param> params;
    std::unique_ptr<nn::Sgd> sgd;
    ModelStepTimes times;
};

}  // namespace

void StepTimingConfig::validate() const {
    if (models.empty()) fail("key 'models': no model to time (e.g. models: [qrnn, lstm-onednn])");
    for (size_t i = 0; i < models.size(); i++)
        if (std::find(models.begin(), models.begin() + static_cast<long>(i), models[i]) != models.begin() + static_cast<long>(i))
            fail("key 'models': model '", models[i], "' listed twice");
    if (batches < 1) fail("key 'batches': must be >= 1, got ", batches);
    if (warmup < 0) fail("key 'warmup': must be >= 0, got ", warmup);
    if (vocab < 0 || vocab > kMaxVocab) fail("key 'vocab': must be in [0, ", kMaxVocab, "], got ", vocab);
    refuse_unused_keys(train, TrainConfig(), {"valid", "test", "checkpoint", "checkpoint_every", "epochs", "max_batches",
                                              "lr_decay", "lr_patience", "log_seconds", "save_initial", "step_log"},
                       "train-speed times steps on the training file: no epochs, validation or checkpoints");
    if (!train.results.empty()) check_output_file(train.results, "a step-timing results file (key 'results')");
    for (auto &m : models) {
        TrainConfig c = config_of(train, m);
        if (c.valid.empty()) c.valid = c.train;  // not read: only the training file is timed on
        try {
            c.validate();
        } catch (const Error &e) {
            fail("model '", m, "': ", e.what());
        }
    }
}

bool is_step_timing_key(const std::string &key) {
    return key == "models" || key == "warmup" || key == "batches" || key == "vocab" || key == "model";
}

void set_step_timing_key(StepTimingConfig &cfg, const std::string &key, const std::string &value, const std::string &where) {
    if (!is_step_timing_key(key))
        return set_train_key(cfg.train, key, value, where);  // its errors name where, key and value
    try {
        if (key == "models") cfg.models = split_models(value);
        else if (key == "warmup") cfg.warmup = parse_count(value, 0);
        else if (key == "batches") cfg.batches = parse_count(value, 1);
        else if (key == "vocab") cfg.vocab = parse_count(value, 0, kMaxVocab);
        else fail("give the models to time as 'models' (a list)");
    } catch (const Error &e) {
        fail(where, ": key '", key, "': value '", value, "': ", e.what());
    }
}

void load_step_timing_yaml(StepTimingConfig &cfg, const std::string &path) {
    for_each_yaml_entry(path, "step-timing config", [&](const std::string &key, const std::string &value, bool list,
                                                        const std::string &where) {
        if (list && key != "models") fail(where, ": key '", key, "': value must be a single value");
        set_step_timing_key(cfg, key, value, where);
    });
}

std::string step_timing_config_text(const StepTimingConfig &cfg) {
    std::string models;
    for (auto &m : cfg.models) models += (models.empty() ? "" : ",") + m;
    std::string text = "models: " + models + "\nwarmup: " + std::to_string(cfg.warmup) + "\nbatches: " +
                       std::to_string(cfg.batches) + "\nvocab: " + std::to_string(cfg.vocab) + "\n";
    for (auto &k : train_keys())
        if (!is_step_timing_key(k.name)) text += k.name + ": " + k.get(cfg.train) + "\n";
    return text;
}

const std::vector<std::pair<const char *, std::vector<double> ModelStepTimes::*>> &step_time_parts() {
    static const std::vector<std::pair<const char *, std::vector<double> ModelStepTimes::*>> parts{
        {"rnn_ms", &ModelStepTimes::rnn_ms},     {"softmax_ms", &ModelStepTimes::softmax_ms},
        {"optim_ms", &ModelStepTimes::optim_ms}, {"other_ms", &ModelStepTimes::other_ms},
        {"total_ms", &ModelStepTimes::total_ms}};
    return parts;
}

StepTimings time_training_steps(const StepTimingConfig &cfg, std::ostream &log) {
    cfg.validate();
    const TrainConfig &tc = cfg.train;
    const Vocabulary file_vocab = Vocabulary::from_file(tc.train), vocab = padded(file_vocab, cfg.vocab, tc.train);
    const std::vector<int32_t> tokens = read_tokens(tc.train, vocab);
    const BatchStream data(tokens, tc.batch, tc.bptt, tc.train);
    int64_t full = data.batches();  // batches of the whole bptt length (the last may be shorter)
    if (full > 0 && data.batch(full - 1).T < tc.bptt) full--;
    if (full < 1)
        fail(tc.train, ": ", tokens.size(), " tokens give no batch of ", tc.batch, " x ", tc.bptt, " steps (lower batch or bptt)");
    const int64_t file_words = file_vocab.size();
    log << "data: " << tokens.size() << " tokens (" << tc.train << "), " << full << " batches of " << tc.batch << " x "
        << tc.bptt << "; vocabulary " << vocab.size()
        << (vocab.size() > file_words ? " (" + std::to_string(file_words) + " from the file, padded)" : "") << "\n";

    std::vector<TimedModel> models;
    for (auto &name : cfg.models) {
        const TrainConfig c = config_of(tc, name);
        TimedModel m;
        try {
            m.model = make_language_model(c, vocab.size());
        } catch (const Unavailable &e) {  // e.g. lstm-onednn@bf16 without avx512_bf16: not timed, as `qrnn run` skips it
            log << "skipped: " << name << ": " << e.what() << "\n";
            continue;
        }
        m.params = m.model->params();
        m.sgd = std::make_unique<nn::Sgd>(c.sgd);
        m.times.model = name;
        for (auto &p : m.params) m.times.parameters += static_cast<int64_t>(p.value->size());
        m.model->set_stochastic(true);
        log << "model " << name << ": " << tc.lm.stack.layers << " x " << tc.lm.stack.hidden << ", embedding "
            << tc.lm.stack.input << ", " << m.times.parameters << " parameters, precision " << c.lm.stack.precision << "\n";
        models.push_back(std::move(m));
    }
    if (models.empty()) throw Unavailable("train-speed: no model of 'models' can run here");
    const size_t M = models.size();
    for (int64_t round = 0; round < cfg.warmup + cfg.batches; round++) {
        const int64_t i = round % full;
        const Batch batch = data.batch(i);
        const bool timed = round >= cfg.warmup;
        std::string line = (timed ? "batch " + std::to_string(round - cfg.warmup + 1) + "/" + std::to_string(cfg.batches)
                                  : "warm-up " + std::to_string(round + 1) + "/" + std::to_string(cfg.warmup)) + ":";
        for (size_t j = 0; j < M; j++) {
            TimedModel &m = models[(static_cast<size_t>(round) + j) % M];
            if (i == 0) m.model->reset_state(tc.batch, 0);  // each pass over the data starts from zeros
            const auto start = Clock::now();
            m.model->zero_grads();
            const StepResult r = m.model->step(batch, true);
            const auto optim_start = Clock::now();
            m.sgd->step(m.params, 1.0 / static_cast<double>(r.targets));
            const auto end = Clock::now();
            const double optim = ms_between(optim_start, end), total = ms_between(start, end);
            char part[160];
            std::snprintf(part, sizeof part, "  %s %.0f ms (rnn %.0f, softmax %.0f, optim %.1f)", m.times.model.c_str(), total,
                          r.rnn_ms, r.softmax_ms, optim);
            line += part;
            if (!timed) continue;
            m.times.rnn_ms.push_back(r.rnn_ms);
            m.times.softmax_ms.push_back(r.softmax_ms);
            m.times.optim_ms.push_back(optim);
            m.times.total_ms.push_back(total);
            m.times.other_ms.push_back(total - r.rnn_ms - r.softmax_ms - optim);
        }
        log << line << "\n" << std::flush;
    }

    StepTimings out;
    std::string names;
    for (auto &m : models) names += (names.empty() ? "" : ",") + m.times.model, out.models.push_back(m.times);
    const MachineInfo machine = machine_info();
    out.attrs = {{"config", step_timing_config_text(cfg)},
                 {"models", names},
                 {"vocab", vocab.size()},
                 {"vocab_file", file_words},
                 {"warmup", cfg.warmup},
                 {"batches", cfg.batches},
                 {"host", machine.host},
                 {"cpu_model", machine.cpu_model},
                 {"cores", machine.cores},
                 {"target", tc.lm.stack.target.empty() ? machine.host_target : tc.lm.stack.target},
                 {"environment", machine.environment}};
    return out;
}

}  // namespace qrnn::lm
