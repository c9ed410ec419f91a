// `qrnn train --task classify-text` (docs/text_tasks.md): the sequence classifier (tasks/seq_classifier.h, either
// front) trained by the loop of tasks/seq_trainer.h on label<TAB>text files (tasks/text_classification.h), and
// `--model bow`, the bag-of-words floor (tasks/bag_of_words.h) on the same files.
// Training examples are visited in a new order each epoch, a function of (seed, epoch) only; an epoch is
// max_batches steps (0: one pass, ceil(examples / batch) steps, the last batch smaller). Batches carry the token
// ids (embedding front: the training vocabulary of words seen min_count times) and the words themselves (projection
// front: hashed, so words outside the vocabulary keep their features). The held-out accuracy of each epoch is on
// valid (all of it); at the end train, valid and test (when given) accuracies go into the results' attributes.
#pragma once
#include <cmath>
#include <memory>
#include <string>

#include "lm/train_config.h"
#include "tasks/seq_classifier.h"
#include "tasks/task_run.h"
#include "tasks/text_classification.h"

namespace qrnn::lm {

// `--data DIR` of task classify-text: DIR/train.tsv, DIR/valid.tsv and, when present, DIR/test.tsv.
void set_text_data_dir(TrainConfig &cfg, const std::string &dir);
// The config's files, read (errors name file and line).
TextClassificationSplits read_text_splits(const TrainConfig &cfg);

struct TextAccuracies {
    double train = NAN, valid = NAN, test = NAN;  // test NaN without a test file
    int64_t vocabulary = 0, parameters = 0;
};
// "<what>: train 0.9904 valid 0.9305 test 0.9324, vocabulary 12717, parameters 25434" (test "-" without one).
std::string text_accuracy_line(const std::string &what, const TextAccuracies &a);
// The results attributes train_accuracy, valid_accuracy, test_accuracy, vocabulary, parameters as TextAccuracies.
TextAccuracies text_accuracies(const SeqResults &results);

// `--model bow`: the bag-of-words floor with its own fixed settings (BagOfWordsConfig: 5 epochs, Adam lr 0.01,
// batch 32, L2 1e-4, shuffle seed 1); of the keys only the files and min_count apply, any other key set is an error.
TextAccuracies run_text_bag_of_words(const TrainConfig &cfg);

// The config the loop runs: max_len the longest example, eval_size valid's size, max_batches one pass when 0.
TrainConfig text_run_config(const TrainConfig &cfg, const TextClassificationSplits &splits);

class TextClassifyRun : public TaskRun {
public:
    // splits: read_text_splits(cfg). With cfg.seq.teacher, the teachers' models are loaded (load_text_classifier) and
    // training distils them (tasks/distillation.h).
    TextClassifyRun(const TrainConfig &cfg, TextClassificationSplits splits);
    // text_run_config's, with vocab the vocabulary's size.
    const TrainConfig &config() const { return cfg_; }
    std::vector<nn::Param> params() override { return model_.params(); }
    void set_stochastic(bool on) override { model_.set_stochastic(on); }
    double train_step(uint64_t index) override;
    double accuracy(const std::function<bool()> &stop, int64_t *evaluated) override;
    double chance() const override { return 1.0 / static_cast<double>(splits_.train.classes()); }
    std::string describe() const override;
    void finish(SeqResults &results) override;
    std::vector<int32_t> predict_all(const TextClassificationData &data);  // every example's class, parameters as they are
    std::vector<double> logits_all(const TextClassificationData &data);    // [examples][classes]
    // An int8 model's calibration (docs/int8.md) on held-out examples: their predictions in f32 record the ranges.
    void calibrate_int8(const TextClassificationData &held_out);
    SequenceClassifier &model() { return model_; }

private:
    double accuracy_of(const TextClassificationData &data, const std::function<bool()> &stop, int64_t *evaluated);
    void order_epoch(int64_t epoch);  // order_ for this epoch
    // distill_mix of the batch's examples (drawn from seed and step) spliced: their first tokens, then another training
    // example's last; which ones were.
    std::vector<bool> splice_some(TextClassificationData &batch, uint64_t index) const;
    TextClassificationSplits splits_;
    TextVocabulary vocab_;
    TrainConfig cfg_;
    SequenceClassifier model_;
    std::vector<int64_t> order_;  // the training examples in this epoch's order
    int64_t order_of_ = -1;       // the epoch order_ is for
    std::vector<std::unique_ptr<TextClassifyRun>> teachers_;  // distillation's (none: plain cross-entropy)
};

// A classify-text checkpoint's model in `precision` with the checkpoint's parameters, its vocabulary from the
// checkpoint's own training file; `labelled`: the examples it will classify (its layers fit their lengths; their
// labels must be its). Errors name the file.
std::unique_ptr<TextClassifyRun> load_text_classifier(const std::string &checkpoint, const TextClassificationData &labelled,
                                                      const std::string &precision = "f32");

}  // namespace qrnn::lm
