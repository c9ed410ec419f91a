#include "lm/train_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/named_table.h"
#include "plugins/model.h"
#include "runtime/parse_number.h"
#include "runtime/yaml_documents.h"

namespace qrnn::lm {
namespace {

// Upper bounds of integer keys (far above any real run; below them no product of two keys overflows int64).
constexpr int64_t kMaxSize = int64_t(1) << 24;   // a tensor dimension: window, emb, hidden, batch, bptt, vocab...
constexpr int64_t kMaxCount = 1000000000;        // a count of steps or epochs

template <class Get>
TrainKey int_key(const char *name, const char *help, bool resumable, Get member, int64_t min, int64_t max = kMaxSize) {
    return {name, help, resumable,
            [member, min, max](TrainConfig &c, const std::string &v) {
                member(c) = parse_count(v, min, max);
            },
            [member](const TrainConfig &c) { return std::to_string(member(const_cast<TrainConfig &>(c))); }};
}

template <class Get>
TrainKey num_key(const char *name, const char *help, bool resumable, Get member) {
    return {name, help, resumable, [member](TrainConfig &c, const std::string &v) { member(c) = parse_finite(v); },
            [member](const TrainConfig &c) { return number_str(member(const_cast<TrainConfig &>(c))); }};
}

// A rate in [0, 1) (zoneout, dropout), checked where it is read so that errors name the file and line.
template <class Get>
TrainKey rate_key(const char *name, const char *help, Get member) {
    return {name, help, false,
            [member](TrainConfig &c, const std::string &v) {
                const double x = parse_finite(v);
                if (!(x >= 0 && x < 1)) fail("must be in [0, 1)");
                member(c) = x;
            },
            [member](const TrainConfig &c) { return number_str(member(const_cast<TrainConfig &>(c))); }};
}

template <class Get>
TrainKey bool_key(const char *name, const char *help, bool resumable, Get member) {
    return {name, help, resumable,
            [member](TrainConfig &c, const std::string &v) {
                if (v != "true" && v != "false" && v != "1" && v != "0") fail("not true, false, 1 or 0");
                member(c) = v == "true" || v == "1";
            },
            [member](const TrainConfig &c) { return std::string(member(const_cast<TrainConfig &>(c)) ? "true" : "false"); }};
}

template <class Get>
TrainKey str_key(const char *name, const char *help, bool resumable, Get member) {
    return {name, help, resumable, [member](TrainConfig &c, const std::string &v) { member(c) = v; },
            [member](const TrainConfig &c) { return member(const_cast<TrainConfig &>(c)); }};
}

template <class Get>
TrainKey choice_key(const char *name, const char *help, Get member, std::vector<std::string> values) {
    return {name, help, true,
            [member, values](TrainConfig &c, const std::string &v) {
                if (std::find(values.begin(), values.end(), v) == values.end()) {
                    std::string known;
                    for (auto &x : values) known += (known.empty() ? "" : ", ") + (x.empty() ? std::string("''") : x);
                    fail("must be one of ", known);
                }
                member(c) = v;
            },
            [member](const TrainConfig &c) { return member(const_cast<TrainConfig &>(c)); }};
}

// A whole unsigned 64-bit decimal number (a hash seed).
uint64_t parse_uint64(const std::string &value) {
    uint64_t x = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), x);
    if (error == std::errc::result_out_of_range) fail("must be in [0, 2^64)");
    if (value.empty() || error != std::errc() || end != value.data() + value.size()) fail("not a non-negative integer");
    return x;
}

#define FIELD(expr) [](TrainConfig &c) -> auto & { return expr; }

std::vector<TrainKey> make_keys() {
    return {
        str_key("model", "trainable model of the stack: qrnn, lstm-onednn, lstm-halide, cnn", false, FIELD(c.lm.stack.model)),
        str_key("pooling", "QRNN pooling: f, fo, ifo", false, FIELD(c.lm.stack.pooling)),
        int_key("window", "QRNN convolution window k", false, FIELD(c.lm.stack.window), 1, 4096),
        int_key("emb", "embedding size (the stack's input)", false, FIELD(c.lm.stack.input), 1),
        int_key("hidden", "hidden units per layer", false, FIELD(c.lm.stack.hidden), 1),
        int_key("layers", "stacked layers", false, FIELD(c.lm.stack.layers), 1, 4096),
        rate_key("zoneout", "zoneout rate (QRNN layers only)", FIELD(c.lm.stack.zoneout)),
        rate_key("dropout", "dropout rate between layers", FIELD(c.lm.stack.dropout)),
        rate_key("io_dropout", "dropout rate on the embedding output and the decoder input", FIELD(c.lm.io_dropout)),
        bool_key("tie_weights", "decoder weights = embedding table (needs emb == hidden)", false, FIELD(c.lm.tie_weights)),
        str_key("schedule", "layer schedule (qrnn schedules)", false, FIELD(c.lm.stack.schedule)),
        str_key("target", "Halide target (default: host JIT)", false, FIELD(c.lm.stack.target)),
        choice_key("precision", "GEMM operands of the QRNN stack and the decoder: f32, bf16 (docs/precision.md)",
                   FIELD(c.lm.stack.precision), {"f32", "bf16"}),
        {"seed", "seed of initialisation and masks", false,
         [](TrainConfig &c, const std::string &v) {
             int64_t x = parse_int(v);
             if (x < 0 || x > 0xffffffffLL) fail("must be in [0, 2^32)");
             c.lm.stack.seed = static_cast<uint32_t>(x);
         },
         [](const TrainConfig &c) { return std::to_string(c.lm.stack.seed); }},
        int_key("batch", "streams per batch B", false, FIELD(c.batch), 1),
        int_key("bptt", "truncated BPTT length T (steps per batch)", false, FIELD(c.bptt), 1),
        int_key("epochs", "epochs to train", true, FIELD(c.epochs), 1, kMaxCount),
        int_key("max_batches", "batches per epoch (0: the whole training split)", false, FIELD(c.max_batches), 0, kMaxCount),
        num_key("lr", "SGD learning rate", false, FIELD(c.sgd.lr)),
        num_key("clip", "clip the global gradient norm to this (0: off)", false, FIELD(c.sgd.clip_norm)),
        num_key("weight_decay", "weight decay (added to the clipped gradient, as torch.optim.SGD)", false,
                FIELD(c.sgd.weight_decay)),
        num_key("lr_decay", "divide lr by this when validation stops improving (1: off)", false, FIELD(c.plateau.factor)),
        int_key("lr_patience", "epochs without improvement before decaying", false, FIELD(c.plateau.patience), 0, kMaxCount),
        str_key("train", "training token file (its words make the vocabulary)", false, FIELD(c.train)),
        str_key("valid", "validation token file", false, FIELD(c.valid)),
        str_key("test", "test token file, evaluated at the end (optional)", true, FIELD(c.test)),
        str_key("checkpoint", "checkpoint HDF5 file: resumed from when it exists", true, FIELD(c.checkpoint)),
        str_key("results", "results HDF5 file: per-epoch perplexities and time breakdown", true, FIELD(c.results)),
        str_key("save_initial", "also write the parameters before the first update, as a checkpoint, to this file", true,
                FIELD(c.save_initial)),
        str_key("step_log", "CSV file: step, epoch, batch, loss (mean per token), gradient norm, lr of every step", true,
                FIELD(c.step_log)),
        int_key("checkpoint_every", "also checkpoint every this many batches (0: epoch ends only)", true,
                FIELD(c.checkpoint_every), 0, kMaxCount),
        num_key("log_seconds", "progress line at most this often (seconds)", true, FIELD(c.log_seconds)),
        // The synthetic sequence tasks (tasks/seq_trainer.h); resumable = outside the identity, which only task lm's
        // checkpoints use (so its checkpoints resume across this addition).
        choice_key("task", "lm (language model), reverse, sort (encoder-decoder), classify (sequence classifier), classify-text "
                   "(the classifier on label<TAB>text files: --data DIR or train, valid, test)",
                   FIELD(c.seq.task), {"lm", "reverse", "sort", "classify", "classify-text"}),
        choice_key("attention", "encoder-decoder attention: on, off (default: the model's)", FIELD(c.seq.attention), {"", "on", "off"}),
        choice_key("pool", "classify: pool the outputs by mean over each sequence, take its last step, max per channel, or "
                   "attention (a learned query's softmax over the steps)",
                   FIELD(c.seq.pool), {"mean", "last", "max", "attention"}),
        choice_key("front", "classify: embedding (a vocab x emb table), or projection (pQRNN: each token's hashed features -> "
                   "a dense ReLU bottleneck to emb; no table)", FIELD(c.seq.front), {"embedding", "projection"}),
        int_key("projection_features", "classify, front projection: ternary features per token (the bottleneck's input)", true,
                FIELD(c.seq.projection_features), 1, 4096),
        {"projection_seed", "classify, front projection: seed of the token hashes, in [0, 2^64)", true,
         [](TrainConfig &c, const std::string &v) { c.seq.projection_seed = parse_uint64(v); },
         [](const TrainConfig &c) { return std::to_string(c.seq.projection_seed); }},
        int_key("min_count", "classify-text: the vocabulary (embedding front, bow) keeps training words seen this often", true,
                FIELD(c.seq.min_count), 1, kMaxCount),
        str_key("teacher", "classify-text: a classify-text checkpoint whose predictions the model also learns (knowledge "
                "distillation, tasks/distillation.h); a comma-separated list: the mean of their logits", true, FIELD(c.seq.teacher)),
        num_key("distill_weight", "classify-text with a teacher: weight of the teacher's soft targets in [0, 1] (the labels' "
                "cross-entropy has 1 - it)", true, FIELD(c.seq.distill_weight)),
        num_key("distill_temperature", "classify-text with a teacher: softmax temperature of the soft targets (> 0)", true,
                FIELD(c.seq.distill_temperature)),
        num_key("distill_mix", "classify-text with a teacher: the fraction in [0, 1] of each batch's examples replaced by two "
                "training examples spliced at random points and labelled by the teacher", true, FIELD(c.seq.distill_mix)),
        int_key("vocab", "synthetic tasks: content tokens", true, FIELD(c.seq.vocab), 1),
        int_key("min_len", "synthetic tasks: shortest sequence", true, FIELD(c.seq.min_len), 1, 1 << 16),
        int_key("max_len", "synthetic tasks: longest sequence", true, FIELD(c.seq.max_len), 1, 1 << 16),
        int_key("eval_size", "synthetic tasks: held-out sequences per evaluation", true, FIELD(c.seq.eval_size), 1, 1 << 20),
        num_key("time_limit", "synthetic tasks: stop after this many seconds (0: none)", true, FIELD(c.seq.time_limit)),
        num_key("target_accuracy", "synthetic tasks: stop at this held-out accuracy", true, FIELD(c.seq.target_accuracy)),
    };
}
#undef FIELD

}  // namespace

TrainConfig::TrainConfig() {
    lm.stack.input = 200;
    lm.stack.hidden = 200;
    lm.stack.layers = 2;
    sgd.lr = 20;
    sgd.clip_norm = 0.25;
}

void TrainConfig::validate() const {
    if (seq.task != "lm") fail("key 'task': '", seq.task, "' is not a language model (qrnn train runs it; sweeps train task lm)");
    if (!seq.attention.empty())
        fail("key 'attention': attention needs an encoder-decoder (task reverse or sort); model '", lm.stack.model,
             "' of task lm has no encoder");
    if (lm.stack.model.rfind("qrnn-bidir", 0) == 0)
        fail("key 'model': '", lm.stack.model, "' reads the whole sequence both ways: a language model predicts the next word from "
             "the past only (qrnn, qrnn-dense, lstm-onednn, lstm-halide, cnn; '", lm.stack.model, "' suits task classify)");
    if (train.empty()) fail("key 'train': no training file (--train FILE or --data DIR)");
    if (valid.empty()) fail("key 'valid': no validation file (--valid FILE or --data DIR)");
    const ModelConfig c(lm.stack, lm_run());
    c.validate();
    ModelConfig training = c;
    training.pass = "training";
    check_model_precision(training);
    if (!nn::has_layer_factory(c.model)) nn::make_layer(c, 0);  // throws "model 'X' is not a stack of trainable layers"
    if (lm.tie_weights && lm.stack.input != lm.stack.hidden)
        fail("key 'tie_weights': needs emb == hidden, got emb ", lm.stack.input, ", hidden ", lm.stack.hidden);
    sgd.validate();
    plateau.validate();
    if (!(log_seconds >= 0)) fail("key 'log_seconds': must be >= 0, got ", log_seconds);
    refuse_unused_keys(*this, TrainConfig(), {"vocab", "min_len", "max_len", "eval_size", "time_limit", "target_accuracy"},
                       "synthetic tasks only");
    refuse_unused_keys(*this, TrainConfig(), {"pool", "front", "projection_features", "projection_seed"}, "tasks classify and classify-text only");
    refuse_unused_keys(*this, TrainConfig(), {"min_count", "teacher", "distill_weight", "distill_temperature", "distill_mix"}, "task classify-text only");
}

void refuse_unused_keys(const TrainConfig &cfg, const TrainConfig &defaults, const std::vector<std::string> &keys,
                        const std::string &users) {
    for (const std::string &name : keys) {
        const TrainKey *k = find_train_key(name);
        if (k->get(cfg) != k->get(defaults))
            fail("key '", name, "': value '", k->get(cfg), "': task ", cfg.seq.task, " does not use it (", users, ")");
    }
}

int64_t parse_count(const std::string &value, int64_t min, int64_t max) {
    const int64_t x = parse_int(value);
    if (x < min) fail("must be >= ", min);
    if (x > max) fail("must be <= ", max);
    return x;
}

const std::vector<TrainKey> &train_keys() {
    static const std::vector<TrainKey> keys = make_keys();
    return keys;
}

const TrainKey *find_train_key(const std::string &name) { return find_named(train_keys(), name); }

void set_train_key(TrainConfig &cfg, const std::string &key, const std::string &value, const std::string &where) {
    const TrainKey *k = find_train_key(key);
    if (!k) fail(where, ": unknown key '", key, "' (known: ", named_list(train_keys()), ")");
    try {
        k->set(cfg, value);
    } catch (const Error &e) {
        fail(where, ": key '", key, "': value '", value, "': ", e.what());
    }
}

void for_each_yaml_entry(const std::string &path, const std::string &what, const YamlEntry &entry) {
    if (std::filesystem::is_directory(path)) fail(path, ": is a directory, not a ", what);
    std::ifstream in(path);
    if (!in) fail(path, ": cannot read ", what);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    YAML::Node root;
    std::optional<YAML::Mark> second;
    try {
        root = YAML::Load(text);
        if (root.IsMap()) second = second_yaml_document(text);
    } catch (const YAML::Exception &e) {
        fail(path, ":", e.mark.line + 1, ":", e.mark.column + 1, ": ", e.msg);
    }
    if (root.IsNull()) fail(path, ": ", what, " is empty");
    if (!root.IsMap()) fail(path, ": ", what, " must be a mapping of key: value");
    if (second) fail(path, ":", second->line + 1, ": a second YAML document: a ", what, " holds exactly one (remove the '---')");
    std::set<std::string> seen;
    for (auto it = root.begin(); it != root.end(); ++it) {
        if (!it->first.IsScalar()) fail(path, ":", it->first.Mark().line + 1, ": keys must be names");
        const std::string key = it->first.Scalar();
        const std::string where = path + ":" + std::to_string(it->first.Mark().line + 1);
        if (!seen.insert(key).second) fail(where, ": key '", key, "': duplicate key");
        const YAML::Node &v = it->second;
        std::string joined;
        if (v.IsSequence())
            for (const auto &item : v) {
                if (!item.IsScalar()) fail(where, ": key '", key, "': list items must be single values");
                joined += (joined.empty() ? "" : ",") + item.as<std::string>();
            }
        else if (!v.IsScalar()) fail(where, ": key '", key, "': value must be a single value");
        entry(key, v.IsSequence() ? joined : v.as<std::string>(), v.IsSequence(), where);
    }
}

void load_train_yaml(TrainConfig &cfg, const std::string &path) {
    for_each_yaml_entry(path, "training config", [&](const std::string &key, const std::string &value, bool list,
                                                     const std::string &where) {
        if (list) fail(where, ": key '", key, "': value must be a single value");
        set_train_key(cfg, key, value, where);
    });
}

void set_data_dir(TrainConfig &cfg, const std::string &dir) {
    if (!std::filesystem::is_directory(dir)) fail("--data ", dir, ": not a directory");
    auto pick = [&](const std::string &split, bool required) -> std::string {
        for (const std::string &name : {"ptb." + split + ".txt", "wiki." + split + ".tokens", split + ".txt"}) {
            auto p = std::filesystem::path(dir) / name;
            if (std::filesystem::exists(p)) return p.string();
        }
        if (required) fail("--data ", dir, ": no ", split, " split (ptb.", split, ".txt, wiki.", split, ".tokens or ", split, ".txt)");
        return "";
    };
    cfg.train = pick("train", true);
    cfg.valid = pick("valid", true);
    cfg.test = pick("test", false);
}

std::string config_text(const TrainConfig &cfg) {
    std::string s;
    for (auto &k : train_keys()) s += k.name + ": " + k.get(cfg) + "\n";
    return s;
}

TrainConfig config_from_text(const std::string &text, const std::string &where) {
    TrainConfig cfg;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        const size_t colon = line.find(": ");
        if (colon == std::string::npos) fail(where, ": malformed config line '", line, "'");
        set_train_key(cfg, line.substr(0, colon), line.substr(colon + 2), where);
    }
    return cfg;
}

std::string identity(const TrainConfig &cfg) {
    std::string s;
    for (auto &k : train_keys())
        if (!k.resumable) s += k.name + "=" + k.get(cfg) + ";";
    return s;
}

}  // namespace qrnn::lm
