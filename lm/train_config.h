// Settings of a training run (`qrnn train`): one table of keys shared by the YAML config file, the command
// line options (--KEY VALUE, overriding the file) and the checkpoint (which records them, to refuse resuming
// under a different configuration).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lm/language_model.h"
#include "nn/optimizer.h"

namespace qrnn::lm {

// The keys of the sequence tasks (`task: reverse | sort | classify | classify-text`, tasks/seq_trainer.h); task lm ignores
// them but `attention`, which asks for an encoder-decoder.
struct SeqTaskKeys {
    std::string task = "lm";
    std::string attention;       // "" (the model's: on for encdec), on, off
    std::string pool = "mean";   // classify: mean | last | max
    std::string front = "embedding";  // classify: embedding | projection (pQRNN's, tasks/classifier_front.h)
    int64_t projection_features = 512;  // classify, front projection: N features per token
    uint64_t projection_seed = 0;       // classify, front projection: the hash seed
    int64_t min_count = 1;              // classify-text: the vocabulary's words are seen this often in training
    std::string teacher;                // classify-text: a classify-text checkpoint to distil from ("": none)
    double distill_weight = 0.5, distill_temperature = 2;  // with a teacher: tasks/distillation.h's w and tau
    double distill_mix = 0;             // with a teacher: the fraction of a batch's examples spliced from two
    int64_t vocab = 10, min_len = 5, max_len = 40, eval_size = 256;
    double time_limit = 0, target_accuracy = 1;  // seconds (0: none); stop at this held-out accuracy
};

struct TrainConfig {
    LmShape lm;                  // lm.vocab is set from the training data
    std::string train, valid, test;  // token files (test optional)
    int64_t batch = 20, bptt = 35, epochs = 6;
    int64_t max_batches = 0;     // batches per epoch (0: the whole training split)
    nn::SgdOptions sgd;
    nn::PlateauDecay plateau;
    std::string checkpoint, results;  // HDF5 files ("" : none)
    std::string save_initial;         // checkpoint of the parameters before the first update ("" : none)
    std::string step_log;             // CSV, a line per training step: loss, gradient norm, lr ("" : none)
    int64_t checkpoint_every = 100;   // also a checkpoint every this many batches (0: only at epoch ends)
    double log_seconds = 2;           // progress line at most this often
    SeqTaskKeys seq;

    TrainConfig();
    void validate() const;            // throws qrnn::Error naming the bad key and value
    // The stack's run settings for task lm: batch x bptt, a training pass.
    RunSettings lm_run() const { return {batch, bptt, false, 0, "training"}; }
};

struct TrainKey {
    std::string name, help;
    bool resumable;  // may differ between a checkpoint and the command resuming it (e.g. epochs)
    std::function<void(TrainConfig &, const std::string &)> set;  // throws qrnn::Error on a malformed value
    std::function<std::string(const TrainConfig &)> get;
};

const std::vector<TrainKey> &train_keys();
// An integer key's value: throws qrnn::Error "not an integer", "must be >= min" or "must be <= max" (set_train_key
// adds where).
int64_t parse_count(const std::string &value, int64_t min, int64_t max = INT64_MAX);
const TrainKey *find_train_key(const std::string &name);
// Sets a key; an unknown key or a malformed value is a qrnn::Error "<where>: key '<key>': value '<v>': why".
void set_train_key(TrainConfig &cfg, const std::string &key, const std::string &value, const std::string &where);
// Every `key: value` of a flat YAML mapping in file order (a list of single values joined by commas, with
// `list` true); `where` is "file:line". Errors name the file (`what` says what kind of file it should be).
using YamlEntry = std::function<void(const std::string &key, const std::string &value, bool list, const std::string &where)>;
void for_each_yaml_entry(const std::string &path, const std::string &what, const YamlEntry &entry);
// A YAML file of `key: value` pairs (a flat mapping).
void load_train_yaml(TrainConfig &cfg, const std::string &path);
// Keys a task does not read must keep that task's default (`defaults`): else "key 'K': task T does not use it
// (`users`)", so that a setting is never silently ignored.
void refuse_unused_keys(const TrainConfig &cfg, const TrainConfig &defaults, const std::vector<std::string> &keys,
                        const std::string &users);
// `--data DIR`: train/valid/test files of DIR (ptb.*.txt, wiki.*.tokens or train.txt...; test optional).
void set_data_dir(TrainConfig &cfg, const std::string &dir);
// Every key as "key: value" lines (checkpoints, results), and back (qrnn eval rebuilds the model from it).
std::string config_text(const TrainConfig &cfg);
TrainConfig config_from_text(const std::string &text, const std::string &where);
// "key=value;" over the keys that must match to resume (not resumable ones).
std::string identity(const TrainConfig &cfg);

}  // namespace qrnn::lm
