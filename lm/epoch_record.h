// One finished epoch of a training run, and the epochs as HDF5 series (one float64 dataset per field under a
// group): shared by checkpoints (/history) and results files (/epochs).
#pragma once
#include <H5Cpp.h>

#include <string>
#include <utility>
#include <vector>

#include "runtime/h5io.h"

namespace qrnn::lm {

// Per-epoch records of any kind as one float64 series per field under `group` (LM and sequence-task results).
template <class Record>
using EpochFields = std::vector<std::pair<const char *, double Record::*>>;
template <class Record>
void write_epochs(H5::H5File &file, const std::string &group, const std::vector<Record> &records,
                  const EpochFields<Record> &fields) {
    for (auto &[name, member] : fields) {
        std::vector<double> series;
        for (auto &r : records) series.push_back(r.*member);
        h5::write_series(file, group + "/" + name, series);
    }
}
template <class Record>  // `path` names the file in errors
std::vector<Record> read_epochs(H5::H5File &file, const std::string &path, const std::string &group,
                                const EpochFields<Record> &fields) {
    std::vector<Record> records;
    for (auto &[name, member] : fields) {
        const std::vector<double> series = h5::read_series(file, path, group + "/" + name);
        records.resize(series.size());
        for (size_t e = 0; e < series.size(); e++) records[e].*member = series[e];
    }
    return records;
}

struct EpochRecord {
    double train_ppl = 0, val_ppl = 0, lr = 0, seconds = 0, tokens_per_s = 0;
    double rnn_ms = 0, softmax_ms = 0, optim_ms = 0;  // per batch, mean over the epoch
};
// The fields by name.
const EpochFields<EpochRecord> &epoch_fields();

void write_epochs(H5::H5File &file, const std::string &group, const std::vector<EpochRecord> &epochs);
// `path` names the file in errors.
std::vector<EpochRecord> read_epochs(H5::H5File &file, const std::string &path, const std::string &group);

}  // namespace qrnn::lm
