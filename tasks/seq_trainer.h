// `qrnn train --task reverse | sort | classify`: the synthetic sequence tasks (nn/seq_tasks.h), and
// `--task classify-text`, the classifier on label<TAB>text files (tasks/text_task.h: its batches), trained with
// Adam (nn/optimizer.h; lr decayed linearly over epochs x max_batches steps to 5%, so a run is reproducible
// step for step from its seed). Each epoch is max_batches steps on fresh seeded training batches, then a
// held-out evaluation: exact match of greedy decoding (reverse, sort: the encoder-decoder, nn/seq2seq.h, with
// or without attention) or accuracy (classify: tasks/seq_classifier.h over any trainable stack). Training stops
// after `epochs`, at target_accuracy or at time_limit (which also cuts a held-out evaluation short: the accuracy
// is then over the sequences evaluated, logged). A progress line; per-epoch curves and (with attention)
// one held-out example's attention heatmap in the results file (tasks/seq_results.h).
#pragma once
#include <ostream>

#include "tasks/seq_results.h"
#include "lm/train_config.h"

namespace qrnn::lm {

// The defaults of a task's keys (every key as TrainConfig() but what the task sets). Throws on an unknown task.
TrainConfig task_defaults(const std::string &task);
// Throws qrnn::Error naming the bad key and value, e.g. a task/model mismatch or attention without an encoder.
void validate_seq_task(const TrainConfig &cfg);
SeqResults train_seq_task(const TrainConfig &cfg, std::ostream &log);

}  // namespace qrnn::lm
