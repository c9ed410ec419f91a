// One finished epoch of a training run, and the epochs as HDF5 series (one float64 dataset per field under a
// group): shared by checkpoints (/history) and results files (/epochs).
#pragma once
#include <H5Cpp.h>

#include <string>
#include <utility>
#include <vector>

namespace qrnn::lm {

struct EpochRecord {
    double train_ppl = 0, val_ppl = 0, lr = 0, seconds = 0, tokens_per_s = 0;
    double rnn_ms = 0, softmax_ms = 0, optim_ms = 0;  // per batch, mean over the epoch
};
// The fields by name.
const std::vector<std::pair<const char *, double EpochRecord::*>> &epoch_fields();

void write_epochs(H5::H5File &file, const std::string &group, const std::vector<EpochRecord> &epochs);
// `path` names the file in errors.
std::vector<EpochRecord> read_epochs(H5::H5File &file, const std::string &path, const std::string &group);

}  // namespace qrnn::lm
