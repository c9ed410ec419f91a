// Checkpoints of the synthetic sequence tasks (`qrnn train --task reverse|sort|classify --checkpoint F`), in HDF5,
// written atomically (a kill at any moment leaves the previous or the new file). A task's training batches and
// masks are functions of the seed and the step, so the step is the whole data position. Layout:
//   attributes on /: format = "qrnn-seq-checkpoint", format_version, identity (keys that must match to resume),
//                    config (every key as "key: value" lines)
//   /params/<name>           float32 every parameter (nn::Param names); every tensor here and under /adam has
//                            attribute fnv1a64 (runtime/h5io.h; root attribute checksums), verified on load with the
//                            values' finiteness
//   /adam                    attribute t (steps taken); /adam/m/<name>, /adam/v/<name> float32 its moments
//   /progress                attributes epoch (completed), step, seconds (of training so far), best (held-out
//                            metric), and of the epoch under way: epoch_steps, epoch_loss (summed)
//   /history/<field>         float64 per completed epoch (SeqEpoch fields, as the results file's /epochs)
//   /int8 (optional)         an int8 calibration of the parameters (docs/int8.md; `qrnn eval --precision int8
//                            --save-int8`): attribute calibration (the held-out file); per int8 layer l, group
//                            /int8/layer_<l>: int8 weights [G][k][n][m], float32 weight_scales [G][m] (checksummed),
//                            attribute input_scale
#pragma once
#include <string>
#include <vector>

#include "runtime/int8_params.h"
#include "tasks/seq_results.h"
#include "nn/optimizer.h"

namespace qrnn::lm {

struct SeqCheckpoint {
    std::string identity, config;
    int64_t epoch = 0, step = 0, epoch_steps = 0;
    double epoch_loss = 0, seconds = 0, best = 0;
    std::vector<SeqEpoch> history;
    nn::AdamState adam;
    std::vector<Int8LayerParams> int8;  // /int8's layers, in order (empty: none)
    std::string int8_calibration;       // the file they were calibrated on
};

void write_seq_checkpoint(const std::string &path, const SeqCheckpoint &checkpoint, const std::vector<nn::Param> &params);
// Everything, the parameters into `params` (each dataset must have its parameter's shape; errors name the file).
// Progress fields must be non-negative and finite, one /history record per finished epoch. First a checkpoint of another configuration than `identity` is refused (lm/run_files.h: require_same_identity).
SeqCheckpoint read_seq_checkpoint(const std::string &path, const std::string &identity, const std::vector<nn::Param> &params);
// Whether `path` is a sequence-task checkpoint (its format attribute; false for another HDF5 file), and its identity and
// config attributes (throws qrnn::Error naming the file if it is not one).
bool is_seq_checkpoint(const std::string &path);
SeqCheckpoint read_seq_checkpoint_header(const std::string &path);

}  // namespace qrnn::lm
