// A sweep run with "train.*" keys trains a language model (lm/trainer.h) instead of timing a pass: the run's
// model fields give the stack (model, pooling, window, input = embedding size, hidden, layers, zoneout,
// dropout, seed, schedule, target), batch and seq give the batch and the BPTT length, the train.* keys the
// rest (data, epochs, lr, ...). Its results row gets the perplexities, the time breakdown and the curves.
#pragma once
#include <map>
#include <ostream>
#include <string>

#include "lm/train_config.h"
#include "sweep/run_spec.h"

namespace qrnn::sweep {

bool is_training_run(const RunSpec &spec);
lm::TrainConfig training_config(const RunSpec &spec);  // throws qrnn::Error on a bad train.* value
// Trains; fills the row's columns best_val_ppl, unigram_val_ppl, test_ppl, train_ppl, epochs_done, tokens_per_s,
// rnn_ms, softmax_ms, optim_ms and median_ms (per batch, last epoch), train_ppl_curve and val_ppl_curve
// (per-epoch perplexities, comma-separated), train_seconds (the epochs' training time, validation excluded) and
// train (the train.* settings, train_settings()). Progress on log. Without a train.checkpoint key it checkpoints into
// `checkpoint` ("" : none) and resumes from it when it exists (bit-identically, as qrnn train).
void record_training_run(const RunSpec &spec, std::map<std::string, Value> &row, std::ostream &log,
                         const std::string &checkpoint = "");

}  // namespace qrnn::sweep
