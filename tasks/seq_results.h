// The results file of `qrnn train --task reverse|sort|classify` (HDF5, replaced atomically after every epoch):
//   attributes on /: format = "qrnn-seq-results", task, metric ("exact_match" for reverse/sort, "accuracy" for
//                    classify), chance (the metric of a guess: 0.5 for classify, 0 for the transductions),
//                    model, attention ("on", "off", "-"), config ("key: value" lines), parameters, steps,
//                    seconds, final_accuracy, best_accuracy, load_start / load_end (1-minute load average),
//                    host, cpu_model, cores
//   /epochs/<field>  float64 per epoch: step (steps done), seconds (since training began, evaluations
//                    included), train_loss (mean over the epoch's steps), accuracy (held-out), lr
//   /heatmap/alpha   float32 [steps][S]: attention weights of one held-out example (reverse/sort with attention)
//   /heatmap/source, /heatmap/output, /heatmap/expected  float64: its source tokens, the tokens decoded at each
//                    step (the last one EOS when decoding ended), the right answer (EOS included); attribute eos
#pragma once
#include <optional>

#include "lm/train_results.h"
#include "runtime/tensor.h"

namespace qrnn::lm {

struct SeqEpoch {
    double step = 0, seconds = 0, train_loss = 0, accuracy = 0, lr = 0;
};
const EpochFields<SeqEpoch> &seq_epoch_fields();

struct SeqHeatmap {
    Tensor<float> alpha;                            // [steps][S]
    std::vector<double> source, output, expected;  // tokens
    int64_t eos = 0;
};

struct SeqResults {
    std::map<std::string, Attr> attrs;
    std::vector<SeqEpoch> epochs;
    std::optional<SeqHeatmap> heatmap;
};

void write_seq_results(const std::string &path, const SeqResults &results);
SeqResults read_seq_results(const std::string &path);  // throws qrnn::Error if not such a file
bool is_seq_results(const std::string &path);           // an HDF5 file with format qrnn-seq-results

}  // namespace qrnn::lm
