#include "tasks/text_eval.h"

#include <memory>

#include "core/error.h"
#include "tasks/seq_checkpoint.h"
#include "tasks/text_task.h"

namespace qrnn::lm {
namespace {
struct LoadedRun {
    std::unique_ptr<TextClassifyRun> run;
    SeqCheckpoint checkpoint;  // everything it holds (to write it back with /int8)
};

// The checkpoint's model in `precision`, its parameters loaded; splits: train (the vocabulary), valid, and the data.
LoadedRun loaded_run(const std::string &checkpoint, const SeqCheckpoint &header, TrainConfig cfg,
                     const TextClassificationSplits &splits, const std::string &precision) {
    cfg.lm.stack.precision = precision;
    LoadedRun r{std::make_unique<TextClassifyRun>(cfg, splits), {}};
    r.checkpoint = read_seq_checkpoint(checkpoint, header.identity, r.run->params());  // shapes checked; its own identity
    r.run->set_stochastic(false);
    return r;
}

double accuracy(const std::vector<int32_t> &predicted, const TextClassificationData &data) {
    int64_t hits = 0;
    for (int64_t i = 0; i < data.size(); i++) hits += predicted[i] == data.examples[i].label;
    return static_cast<double>(hits) / static_cast<double>(data.size());
}
}  // namespace

TextEvalResult evaluate_text_checkpoint(const std::string &checkpoint, const std::string &data, bool int8, bool save_int8) {
    const SeqCheckpoint header = read_seq_checkpoint_header(checkpoint);
    const TrainConfig cfg = config_from_text(header.config, checkpoint);
    if (cfg.seq.task != "classify-text")
        fail(checkpoint, ": a checkpoint of task ", cfg.seq.task, "; qrnn eval reads language models and classify-text");
    const TextClassificationSplits splits = read_text_classification_splits(cfg.train, cfg.valid, data);
    TextEvalResult r;
    r.examples = splits.test.size();
    const std::vector<int32_t> f32 = loaded_run(checkpoint, header, cfg, splits, "f32").run->predict_all(splits.test);
    r.f32 = accuracy(f32, splits.test);
    if (!int8) return r;
    LoadedRun loaded = loaded_run(checkpoint, header, cfg, splits, "int8");
    TextClassifyRun &quantized = *loaded.run;
    SeqCheckpoint &stored = loaded.checkpoint;
    r.int8_from_checkpoint = !stored.int8.empty();
    if (r.int8_from_checkpoint) {
        quantized.model().set_int8_layers(stored.int8);
        r.calibration_file = stored.int8_calibration;
    } else {
        quantized.calibrate_int8(splits.valid);
        r.calibration_file = cfg.valid, r.calibration_examples = splits.valid.size();
        if (save_int8) {
            stored.int8 = quantized.model().int8_layers(), stored.int8_calibration = cfg.valid;
            write_seq_checkpoint(checkpoint, stored, quantized.params());
            r.int8_saved = true;
        }
    }
    const std::vector<int32_t> q = quantized.predict_all(splits.test);
    r.int8 = accuracy(q, splits.test);
    for (size_t i = 0; i < q.size(); i++) r.changed += q[i] != f32[i];
    return r;
}

}  // namespace qrnn::lm
