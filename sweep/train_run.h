// A sweep run with "train.*" keys trains instead of timing a pass: a language model (lm/trainer.h), or with
// train.task reverse | sort | classify a model on a synthetic sequence task (tasks/seq_trainer.h; the task's
// defaults first). The run's model fields give the stack (model, pooling, window, input = embedding size,
// hidden, layers, zoneout, dropout, seed, schedule, target), batch the batch, seq the BPTT length (task lm
// only: a synthetic task's lengths are train.min_len..max_len), the train.* keys the rest (data, epochs, lr,
// attention, ...). Its results row gets the perplexities, time breakdown and curves, or a task's accuracies.
#pragma once
#include <map>
#include <ostream>
#include <string>

#include "lm/train_config.h"
#include "sweep/run_spec.h"

namespace qrnn::sweep {

bool is_training_run(const RunSpec &spec);
lm::TrainConfig training_config(const RunSpec &spec);  // throws qrnn::Error on a bad train.* value
void validate_training_run(const RunSpec &spec);       // the whole training config; throws naming the key
// Trains. Task lm fills the row's columns best_val_ppl, unigram_val_ppl, test_ppl, train_ppl, epochs_done,
// tokens_per_s, rnn_ms, softmax_ms, optim_ms and median_ms (per batch, last epoch), train_ppl_curve, val_ppl_curve
// (per-epoch perplexities, comma-separated) and train_seconds (the epochs' training time, validation excluded).
// A synthetic task fills task, metric (exact_match or accuracy), attention (on, off, -), chance, parameters,
// best_accuracy, final_accuracy, epochs_done, steps, train_seconds (evaluations included), train_loss_curve and
// accuracy_curve (held-out, per epoch). (The runner's row has train: the train.* settings, train_settings().)
// Progress on log. Without a train.checkpoint key it checkpoints into `checkpoint` ("" : none) and resumes
// from it when it exists (bit-identically, as qrnn train).
void record_training_run(const RunSpec &spec, std::map<std::string, Value> &row, std::ostream &log,
                         const std::string &checkpoint = "");

}  // namespace qrnn::sweep
