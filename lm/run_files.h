// What every training run of `qrnn train` (task lm and the synthetic tasks) does around its output files.
#pragma once
#include <memory>
#include <string>

#include "lm/train_config.h"
#include "runtime/writer_lock.h"

namespace qrnn::lm {

// Makes the checkpoint's and results' directories, takes the one-writer lock on the checkpoint (a second run
// gets an error naming --checkpoint) and removes the debris of killed writes. Null without a checkpoint.
std::unique_ptr<WriterLock> prepare_run_files(const TrainConfig &cfg);

// Throws "<checkpoint>: checkpoint of another configuration (key 'lr' is '20' there, '10' here); delete it or
// name another --checkpoint" when two identity() strings differ.
void require_same_identity(const std::string &checkpoint, const std::string &saved, const std::string &now);

}  // namespace qrnn::lm
