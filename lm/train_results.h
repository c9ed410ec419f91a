// The results file of a training run (HDF5, replaced atomically after every epoch):
//   attributes on /: format = "qrnn-lm-results", config ("key: value" lines), model, vocab, parameters,
//                    unigram_val_ppl, best_val_ppl, test_ppl (NaN without a test file), host, cpu_model, cores
//   /epochs/<field>  float64 per epoch: train_ppl, val_ppl, lr, seconds, tokens_per_s, and the per-batch
//                    means of rnn_ms (forward + backward), softmax_ms (forward + backward), optim_ms
#pragma once
#include <H5Cpp.h>

#include <map>
#include <string>
#include <variant>
#include <vector>

#include "lm/checkpoint.h"

namespace qrnn::lm {

using Attr = std::variant<int64_t, double, std::string>;

struct TrainResults {
    std::map<std::string, Attr> attrs;
    std::vector<EpochRecord> epochs;
};

void write_train_results(const std::string &path, const TrainResults &results);
TrainResults read_train_results(const std::string &path);  // throws qrnn::Error if not such a file
bool is_train_results(const std::string &path);             // an HDF5 file with format qrnn-lm-results

// Shared by the LM's results files: attributes of any type, the `format` attribute that names the kind.
void write_attrs(H5::H5Object &obj, const std::map<std::string, Attr> &attrs);
std::map<std::string, Attr> read_attrs(H5::H5Object &obj, const std::string &file);  // `file` names it in errors
bool has_format(const std::string &path, const std::string &format);  // false for an unreadable or other file
// Throws qrnn::Error "<path>: not a <what> (attribute format is not <format>)".
void check_format(H5::H5File &file, const std::string &path, const std::string &format, const std::string &what);

}  // namespace qrnn::lm
