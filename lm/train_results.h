// The results file of a training run (HDF5, replaced atomically after every epoch):
//   attributes on /: format = "qrnn-lm-results", config ("key: value" lines), model, vocab, parameters,
//                    unigram_val_ppl, best_val_ppl, test_ppl (NaN without a test file), host, cpu_model, cores
//   /epochs/<field>  float64 per epoch: train_ppl, val_ppl, lr, seconds, tokens_per_s, and the per-batch
//                    means of rnn_ms (forward + backward), softmax_ms (forward + backward), optim_ms
#pragma once
#include <functional>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include <H5Cpp.h>

#include "lm/checkpoint.h"
#include "runtime/h5io.h"

namespace qrnn::lm {

using Attr = std::variant<int64_t, double, std::string>;

struct TrainResults {
    std::map<std::string, Attr> attrs;
    std::vector<EpochRecord> epochs;
};

void write_train_results(const std::string &path, const TrainResults &results);
TrainResults read_train_results(const std::string &path);  // throws qrnn::Error if not such a file
bool is_train_results(const std::string &path);             // an HDF5 file with format qrnn-lm-results

// Shared by the results files of `qrnn train` (this one; tasks/seq_results.h): `format` and the other attributes on
// / (h5::require_format checks it), per-epoch records as /epochs/<field> series (lm/epoch_record.h). `path` and
// `what` name the file in errors.
bool has_results_format(const std::string &path, const char *format, const char *what);
void write_root_attrs(H5::H5File &file, const char *format, const std::map<std::string, Attr> &attrs);
std::map<std::string, Attr> read_root_attrs(H5::H5File &file, const std::string &path);
// What every results reader does first: opens `path`, requires its root attribute format, reads the root attributes
// into attrs, then read(file) the rest; an HDF5 error is a qrnn::Error "<path>: malformed <what> (...)".
void read_results_file(const std::string &path, const char *format, const char *what, std::map<std::string, Attr> &attrs,
                       const std::function<void(H5::H5File &)> &read);

}  // namespace qrnn::lm
