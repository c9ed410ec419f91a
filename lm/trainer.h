// The training loop of `qrnn train`: truncated BPTT over the batches of a corpus, SGD with clipping, L2 and
// plateau decay of the learning rate, per-epoch validation, a progress line, checkpoints to resume from
// (bit-identically) and a results file. The loop (fit) trains any lm::TrainableModel; train_language_model builds
// the word-level LM of a TrainConfig around it.
#pragma once
#include <limits>
#include <memory>
#include <ostream>

#include "lm/checkpoint.h"
#include "lm/train_config.h"

namespace qrnn::lm {

struct TrainOutcome {
    std::vector<EpochRecord> history;
    double best_val_ppl = 0, unigram_val_ppl = 0;
    double test_ppl = std::numeric_limits<double>::quiet_NaN();  // when a test file is given: with the best parameters
    int64_t best_epoch = 0;        // the epoch (1-based) of best_val_ppl
    std::string test_params;       // whose parameters test_ppl uses: "best validation epoch" ("final": a checkpoint without them)
    int64_t resumed_at_step = -1;  // the checkpoint's step when resumed, else -1
};

// Throws qrnn::Error "<config>: needs about X GiB, above the memory limit" (runtime/memory_guard.h) when the model
// with its embedding, decoder and logits would not fit; make_language_model checks it first.
void check_language_model_memory(const TrainConfig &cfg, int64_t vocab);
std::unique_ptr<TrainableModel> make_language_model(const TrainConfig &cfg, int64_t vocab);
// Perplexity of the model over the whole stream (masks off, state from zeros).
double perplexity(TrainableModel &model, const BatchStream &data);

// Trains cfg's language model (resuming from cfg.checkpoint when the file exists); progress on log.
TrainOutcome train_language_model(const TrainConfig &cfg, std::ostream &log);

// What the loop needs besides the model: data, optimizer settings, where to checkpoint.
struct FitOptions {
    int64_t epochs = 1, max_batches = 0, checkpoint_every = 0;
    nn::SgdOptions sgd;
    std::string checkpoint;                 // "" : none
    std::string step_log;                   // CSV of every step ("" : none); appended to when resuming
    double log_seconds = 2;
    std::function<void(const std::vector<EpochRecord> &)> on_epoch;  // e.g. write the results file
};
// Trains model from `state`: a fresh one (identity, config and vocab to write into checkpoints, the plateau
// settings), or one read from a checkpoint whose model tensors (and best_params) are already loaded. Leaves in
// `state` the progress (every epoch's record) and the parameters of the best validation epoch (best_params).
void fit(TrainableModel &model, const BatchStream &train, const BatchStream &valid, const FitOptions &opts, CheckpointInfo &state,
         std::ostream &log);

}  // namespace qrnn::lm
