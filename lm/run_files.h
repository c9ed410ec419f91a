// What every training run of `qrnn train` (task lm and the synthetic tasks) does around its output files.
#pragma once
#include <memory>
#include <string>

#include "lm/train_config.h"
#include "nn/layer.h"
#include "runtime/writer_lock.h"

namespace qrnn::lm {

// Makes the checkpoint's and results' directories, takes the one-writer lock on the checkpoint (a second run
// gets an error naming --checkpoint) and removes the debris of killed writes. Null without a checkpoint.
std::unique_ptr<WriterLock> prepare_run_files(const TrainConfig &cfg);

// A run that diverged stops: qrnn::Error "step 12: training loss is inf: training diverged (lower lr, or clip);
// stopped, c.h5 keeps the last finite state written" unless value is finite (`what` names it). Every checkpoint
// write checks the parameters first (require_finite_params), so the file on disk never holds a non-finite one.
void require_finite(const std::string &what, double value, int64_t step, const std::string &checkpoint);
void require_finite_params(const std::vector<nn::Param> &params, int64_t step, const std::string &checkpoint);

// Throws qrnn::Error naming the key and file unless each token file given (train, valid, test) exists, is not a
// directory and, if a regular file, is not empty (a pipe is read as it comes).
void check_token_files(const TrainConfig &cfg);

// Throws qrnn::Error naming the key unless the checkpoint and results paths can be written (check_output_file:
// a regular file or none, through symbolic links; a name that fits) and differ. prepare_run_files calls it.
void check_output_files(const TrainConfig &cfg);

// Throws "<checkpoint>: checkpoint of another configuration (key 'lr' is '20' there, '10' here); delete it or
// name another --checkpoint" when two identity() strings differ.
void require_same_identity(const std::string &checkpoint, const std::string &saved, const std::string &now);

}  // namespace qrnn::lm
