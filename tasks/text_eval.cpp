#include "tasks/text_eval.h"

#include <memory>

#include "core/error.h"
#include "tasks/seq_checkpoint.h"
#include "tasks/text_task.h"

namespace qrnn::lm {
namespace {
// The checkpoint's model in `precision` (parameters as initialised); splits: train (the vocabulary), valid, the data.
std::unique_ptr<TextClassifyRun> model_run(TrainConfig cfg, const TextClassificationSplits &splits, const std::string &precision) {
    cfg.lm.stack.precision = precision, cfg.seq.teacher.clear();  // a distilled model runs without its teacher
    auto run = std::make_unique<TextClassifyRun>(cfg, splits);
    run->set_stochastic(false);
    return run;
}

// to's parameter values from `from` (models of one config: the same parameters in the same order).
void copy_params(const std::vector<nn::Param> &from, const std::vector<nn::Param> &to) {
    for (size_t i = 0; i < from.size(); i++) *to.at(i).value = *from[i].value;
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
    const std::unique_ptr<TextClassifyRun> plain = model_run(cfg, splits, "f32");
    // Read once (the shapes checked; its own identity): the f32 model's parameters, and what is written back.
    SeqCheckpoint stored = read_seq_checkpoint(checkpoint, header.identity, plain->params());
    const std::vector<int32_t> f32 = plain->predict_all(splits.test);
    r.f32 = accuracy(f32, splits.test);
    if (!int8) return r;
    const std::unique_ptr<TextClassifyRun> quantized = model_run(cfg, splits, "int8");
    copy_params(plain->params(), quantized->params());
    r.int8_from_checkpoint = !stored.int8.empty();
    if (r.int8_from_checkpoint) {
        quantized->model().set_int8_layers(stored.int8);
        r.calibration_file = stored.int8_calibration;
    } else {
        quantized->calibrate_int8(splits.valid);
        r.calibration_file = cfg.valid, r.calibration_examples = splits.valid.size();
        if (save_int8) {
            stored.int8 = quantized->model().int8_layers(), stored.int8_calibration = cfg.valid;
            write_seq_checkpoint(checkpoint, stored, quantized->params());
            r.int8_saved = true;
        }
    }
    const std::vector<int32_t> q = quantized->predict_all(splits.test);
    r.int8 = accuracy(q, splits.test);
    for (size_t i = 0; i < q.size(); i++) r.changed += q[i] != f32[i];
    return r;
}

}  // namespace qrnn::lm
