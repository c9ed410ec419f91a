// Training checkpoints (HDF5, written atomically: a kill at any moment leaves the previous or the new file):
// everything a run needs to go on bit-identically: the configuration, vocabulary, parameters, carried
// recurrent state, optimizer state, the masks' RNG state and the data position. Layout:
//   attributes on /: format = "qrnn-lm-checkpoint", format_version and convention (lm/convention.h), identity
//                    (keys that must match to resume),
//                    config (every key as "key: value" lines), rng (how masks are drawn)
//   /vocab                   uint8   the vocabulary, one word per line
//   /params/<name>           float32 every parameter (nn::Param names, "/" kept: e.g. /params/layer_0/weights);
//                            every dataset under /params, /state and /best has attribute fnv1a64 (h5io.h; root
//                            attribute checksums), verified on load with the values' finiteness
//   /state/<l>/<name>        float32 carried state of layer l; attribute time on /state/<l> (the masks' clock)
//   /optimizer               attributes lr, plateau_best, plateau_bad, plateau_started
//   /progress                attributes epoch (completed), batch (next in the epoch), step, and the epoch's
//                            running sums loss, targets, rnn_ms, softmax_ms, optim_ms, seconds
//   /history/<field>         float64 per completed epoch (fields of EpochRecord)
//   /best/<name>             float32 the parameters of the epoch with the best validation perplexity so far
//                            (attribute epoch on /best, 1-based); absent before the first epoch ends
#pragma once
#include <string>
#include <vector>

#include "lm/epoch_record.h"
#include "lm/trainable_model.h"
#include "nn/optimizer.h"

namespace qrnn::lm {

struct TrainProgress {
    int64_t epoch = 0, batch = 0, step = 0;
    double loss = 0;
    int64_t targets = 0;
    double rnn_ms = 0, softmax_ms = 0, optim_ms = 0, seconds = 0;
    std::vector<EpochRecord> history;
};

struct CheckpointInfo {
    std::string identity, config;  // as TrainConfig identity() and its "key: value" lines
    std::vector<std::string> vocab;
    double lr = 0;
    nn::PlateauDecay plateau;
    TrainProgress progress;
    // Parameters (model.params() order) of the best validation epoch so far, and that epoch (1-based; 0: none).
    std::vector<Tensor<float>> best_params;
    int64_t best_epoch = 0;
};

// Throws qrnn::Error naming path and the /progress, /history, /best or /optimizer field unless info's progress is
// consistent with a run of `epochs` epochs of batches_per_epoch batches: epoch in [0, epochs], batch in [0,
// batches_per_epoch), step = epoch x batches_per_epoch + batch, one /history record per finished epoch, the
// /best epoch among them, finite non-negative sums, lr finite and > 0. Step 0 is valid (a checkpoint written
// before training: its parameters are loaded as any other's).
void validate_progress(const std::string &path, const CheckpointInfo &info, int64_t batches_per_epoch, int64_t epochs);

void write_checkpoint(const std::string &path, const CheckpointInfo &info, TrainableModel &model);
// Everything but the model's tensors (best_params stays empty: read_best_params). to_resume false (evaluation)
// also reads checkpoints of the old training convention (lm/convention.h).
CheckpointInfo read_checkpoint_info(const std::string &path, bool to_resume = true);
// Parameters and carried state into model (shapes must match; errors name the file and dataset).
void load_checkpoint_model(const std::string &path, TrainableModel &model);
// The /best parameters in model.params() order (shapes checked against model's); empty when there are none.
std::vector<Tensor<float>> read_best_params(const std::string &path, TrainableModel &model);
// Copies tensors (model.params() order, as best_params) into the model's parameters.
void set_params(TrainableModel &model, const std::vector<Tensor<float>> &values);

}  // namespace qrnn::lm
