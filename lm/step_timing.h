// Training steps of several language models timed side by side (the paper's Fig. 4 left: time per batch
// split into rnn, softmax and optimization): every model of one configuration trains on the same real
// batches, their steps interleaved (the model order rotated every round, so that none always runs first),
// each step split into rnn (embedding, stack, dropouts: forward + backward), softmax (decoder and loss:
// forward + backward) and optimization (clipping, L2, SGD). Warm-up rounds are not recorded.
//
// Config (`qrnn train-speed CONFIG.yaml`, experiments/paper_fig4_left.yaml): a flat YAML mapping of the
// training keys (lm/train_config.h) plus `models` (a list; `qrnn@bf16` is the qrnn in precision bf16 whatever the
// key `precision` says, so one run times both precisions side by side), `warmup`, `batches` (timed rounds) and `vocab`
// (pad the training file's vocabulary with unused words to this size, to time a real vocabulary's softmax).
//
// Results file (HDF5, written atomically): attributes on / format = "qrnn-lm-step-timing", config ("key:
// value" lines), models (comma-separated, in config order), vocab, vocab_file (words the training file
// gives), warmup, batches, host, cpu_model, cores, target (Halide), environment; /models/<model>/<part>_ms
// float64 per timed batch (part: rnn, softmax, optim, other = zeroing gradients and the rest of the step,
// total), attribute parameters on /models/<model>.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "lm/train_results.h"
#include "lm/train_config.h"

namespace qrnn::lm {

struct StepTimingConfig {
    TrainConfig train;                // every model's settings; train.lm.stack.model is replaced per model
    std::vector<std::string> models;  // e.g. qrnn, lstm-onednn, lstm-halide; NAME@PRECISION: in that precision (qrnn@bf16)
    int64_t warmup = 2, batches = 10; // rounds (one step of every model each) not recorded, then recorded
    int64_t vocab = 0;                // 0: the training file's vocabulary
    void validate() const;            // throws qrnn::Error naming the bad key and value
};

// Sets a key (the step-timing keys, else a training key); errors as set_train_key.
// Keys of its own (models, warmup, batches, vocab: the padded vocabulary, model: refused); every other key is a
// `qrnn train` key (lm/train_config.h).
bool is_step_timing_key(const std::string &key);
void set_step_timing_key(StepTimingConfig &cfg, const std::string &key, const std::string &value, const std::string &where);
void load_step_timing_yaml(StepTimingConfig &cfg, const std::string &path);
std::string step_timing_config_text(const StepTimingConfig &cfg);

struct ModelStepTimes {
    std::string model;
    int64_t parameters = 0;
    std::vector<double> rnn_ms, softmax_ms, optim_ms, other_ms, total_ms;  // per timed batch
};
// The series of ModelStepTimes by name, as in the results file.
const std::vector<std::pair<const char *, std::vector<double> ModelStepTimes::*>> &step_time_parts();

struct StepTimings {
    std::map<std::string, Attr> attrs;
    std::vector<ModelStepTimes> models;
};

// Times cfg's models; a progress line per round on log. Throws qrnn::Error on bad settings or data.
StepTimings time_training_steps(const StepTimingConfig &cfg, std::ostream &log);

void write_step_timings(const std::string &path, const StepTimings &t);
StepTimings read_step_timings(const std::string &path);  // throws qrnn::Error naming the file and what is wrong
bool is_step_timings(const std::string &path);             // an HDF5 file with format qrnn-lm-step-timing

// The paper's Fig. 4 left bars (ms per batch on its GPU): experiments/paper/fig4_left_training_ms.csv.
struct PaperBar {
    std::string model;
    double rnn_ms = 0, softmax_ms = 0, optim_ms = 0, total_ms = 0;
};
std::vector<PaperBar> read_paper_fig4_left(const std::string &csv_path);  // throws naming file and line
std::string default_paper_fig4_left_csv();                               // the copy in this source tree
// The paper's bar a model of ours compares with: qrnn - QRNN, lstm-onednn - LSTM (cuDNN), lstm-halide - LSTM
// (the paper's plain LSTM); "" for another model.
std::string paper_counterpart(const std::string &model);

}  // namespace qrnn::lm
