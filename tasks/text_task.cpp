#include "tasks/text_task.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <set>

#include "core/error.h"
#include "tasks/bag_of_words.h"
#include "tasks/seq_checkpoint.h"
#include "tasks/seq_trainer.h"

namespace qrnn::lm {
namespace {

constexpr int64_t kEvalBatch = 64;

int64_t longest_example(const TextClassificationSplits &s) {
    size_t longest = 1;
    for (const TextClassificationData *d : {&s.train, &s.valid, &s.test})
        for (const TextExample &e : d->examples) longest = std::max(longest, e.tokens.size());
    return static_cast<int64_t>(longest);
}

TrainConfig with_vocabulary(TrainConfig cfg, const TextVocabulary &vocab) {
    cfg.seq.vocab = vocab.size();
    return cfg;
}

ClassifierShape shape_of(const TrainConfig &cfg, int64_t classes) {
    ClassifierShape s;
    s.stack = cfg.lm.stack;
    s.vocab = cfg.seq.vocab, s.classes = classes, s.pool = cfg.seq.pool;
    s.front = cfg.seq.front, s.projection_features = cfg.seq.projection_features, s.projection_seed = cfg.seq.projection_seed;
    return s;
}

std::string label_list(const TextClassificationData &d) {  // "ptb, wiki"
    std::string s;
    for (const std::string &l : d.labels) s += (s.empty() ? "" : ", ") + l;
    return s;
}

std::string file_name(const std::string &path) { return std::filesystem::path(path).filename().string(); }

}  // namespace

TrainConfig text_run_config(const TrainConfig &cfg, const TextClassificationSplits &splits) {
    TrainConfig c = cfg;
    c.seq.max_len = longest_example(splits), c.seq.min_len = 1, c.seq.eval_size = splits.valid.size();
    if (c.max_batches == 0) c.max_batches = (splits.train.size() + c.batch - 1) / c.batch;
    return c;
}

void set_text_data_dir(TrainConfig &cfg, const std::string &dir) {
    if (!std::filesystem::is_directory(dir)) fail("--data ", dir, ": not a directory");
    auto file = [&](const char *name) { return (std::filesystem::path(dir) / name).string(); };
    for (const char *name : {"train.tsv", "valid.tsv"})
        if (!std::filesystem::exists(file(name))) fail("--data ", dir, ": no ", name, " (task classify-text reads train.tsv, valid.tsv, test.tsv)");
    cfg.train = file("train.tsv"), cfg.valid = file("valid.tsv");
    cfg.test = std::filesystem::exists(file("test.tsv")) ? file("test.tsv") : "";
}

TextClassificationSplits read_text_splits(const TrainConfig &cfg) {
    return read_text_classification_splits(cfg.train, cfg.valid, cfg.test);
}

std::string text_accuracy_line(const std::string &what, const TextAccuracies &a) {
    char test[32] = "-", line[256];
    if (!std::isnan(a.test)) std::snprintf(test, sizeof test, "%.4f", a.test);
    std::snprintf(line, sizeof line, ": train %.4f valid %.4f test %s, vocabulary %lld, parameters %lld", a.train, a.valid,
                  test, (long long)a.vocabulary, (long long)a.parameters);
    return what + line;
}

TextAccuracies text_accuracies(const SeqResults &r) {
    TextAccuracies a;
    a.train = std::get<double>(r.attrs.at("train_accuracy")), a.valid = std::get<double>(r.attrs.at("valid_accuracy"));
    a.test = std::get<double>(r.attrs.at("test_accuracy"));
    a.vocabulary = std::get<int64_t>(r.attrs.at("vocabulary")), a.parameters = std::get<int64_t>(r.attrs.at("parameters"));
    return a;
}

TextAccuracies run_text_bag_of_words(const TrainConfig &cfg) {
    const TrainConfig defaults = task_defaults(cfg.seq.task);
    const std::set<std::string> used = {"task", "model", "train", "valid", "test", "min_count", "log_seconds"};
    for (const TrainKey &k : train_keys())
        if (!used.count(k.name) && k.get(cfg) != k.get(defaults))
            fail("key '", k.name, "': value '", k.get(cfg), "': model bow has fixed settings (tasks/bag_of_words.h); of the "
                 "keys only data, train, valid, test and min_count apply");
    BagOfWordsConfig c;
    c.min_count = cfg.seq.min_count;
    const BagOfWordsResult r = train_bag_of_words(read_text_splits(cfg), c);
    return {r.train_accuracy, r.valid_accuracy, cfg.test.empty() ? NAN : r.test_accuracy, r.vocabulary, r.parameters};
}

TextClassifyRun::TextClassifyRun(const TrainConfig &cfg, TextClassificationSplits splits)
    : splits_(std::move(splits)), vocab_(TextVocabulary::from_training(splits_.train, cfg.seq.min_count)),
      cfg_(with_vocabulary(text_run_config(cfg, splits_), vocab_)), model_(shape_of(cfg_, splits_.train.classes()), {cfg_.batch, cfg_.seq.max_len}) {
    if (!cfg_.seq.teacher.empty())
        for (const std::string &file : teacher_checkpoints(cfg_.seq.teacher))
            teachers_.push_back(load_text_classifier(file, splits_.train));
}

std::unique_ptr<TextClassifyRun> load_text_classifier(const std::string &checkpoint, const TextClassificationData &labelled,
                                                      const std::string &precision) {
    const SeqCheckpoint header = read_seq_checkpoint_header(checkpoint);
    TrainConfig cfg = config_from_text(header.config, checkpoint);
    if (cfg.seq.task != "classify-text") fail(checkpoint, ": a checkpoint of task ", cfg.seq.task, ", not classify-text");
    cfg.lm.stack.precision = precision, cfg.seq.teacher.clear();  // its own teacher is not needed to run it
    TextClassificationSplits splits = read_text_classification_splits(cfg.train, cfg.valid, "");
    if (splits.train.labels != labelled.labels)
        fail(checkpoint, ": its labels (", label_list(splits.train), ") are not those of the data (", label_list(labelled), ")");
    splits.test = labelled;  // for the lengths only
    auto run = std::make_unique<TextClassifyRun>(cfg, std::move(splits));
    read_seq_checkpoint(checkpoint, header.identity, run->params());
    run->set_stochastic(false);
    return run;
}

void TextClassifyRun::order_epoch(int64_t epoch) {
    if (order_of_ == epoch) return;
    const int64_t n = splits_.train.size();
    order_.resize(n);
    for (int64_t i = 0; i < n; i++) order_[i] = i;
    std::mt19937_64 rng((static_cast<uint64_t>(cfg_.lm.stack.seed) << 32) ^ static_cast<uint64_t>(epoch));
    for (int64_t i = n - 1; i > 0; i--) std::swap(order_[i], order_[rng() % static_cast<uint64_t>(i + 1)]);  // Fisher-Yates
    order_of_ = epoch;
}

double TextClassifyRun::train_step(uint64_t index) {
    const int64_t step = static_cast<int64_t>(index) - 1, n = splits_.train.size();
    order_epoch(step / cfg_.max_batches);
    const int64_t first = (step % cfg_.max_batches) * cfg_.batch % n;
    TextClassificationData batch;
    for (int64_t i = first; i < std::min(n, first + cfg_.batch); i++) batch.examples.push_back(splits_.train.examples[order_[i]]);
    model_.set_mask_draw(index);
    if (teachers_.empty()) return model_.loss(text_classify_batch(batch, vocab_, 0, batch.size()), true);
    const std::vector<bool> spliced = splice_some(batch, index);
    std::vector<std::vector<double>> each;
    for (auto &t : teachers_) each.push_back(t->logits_all(batch));
    const std::vector<double> teacher = mean_logits(each);
    const std::vector<int32_t> teachers_class = most_likely(teacher, splits_.train.classes());
    for (int64_t i = 0; i < batch.size(); i++)
        if (spliced[i]) batch.examples[i].label = teachers_class[i];
    const Distillation d{cfg_.seq.distill_weight, cfg_.seq.distill_temperature};
    return model_.distillation_loss(text_classify_batch(batch, vocab_, 0, batch.size()), teacher, d);
}

std::vector<bool> TextClassifyRun::splice_some(TextClassificationData &batch, uint64_t index) const {
    std::vector<bool> spliced(batch.examples.size(), false);
    if (cfg_.seq.distill_mix <= 0) return spliced;
    std::mt19937_64 rng((static_cast<uint64_t>(cfg_.lm.stack.seed) << 32) ^ (index * 0x9E3779B97F4A7C15ull) ^ 0x5D1CEull);
    std::uniform_real_distribution<double> u(0, 1);
    for (size_t i = 0; i < batch.examples.size(); i++) {
        if (u(rng) >= cfg_.seq.distill_mix) continue;
        const TextExample &other = splits_.train.examples[rng() % static_cast<uint64_t>(splits_.train.size())];
        std::vector<std::string> &tokens = batch.examples[i].tokens;
        const size_t keep_whole = tokens.size(), keep = 1 + rng() % tokens.size(), from = rng() % other.tokens.size();
        tokens.resize(keep);
        tokens.insert(tokens.end(), other.tokens.begin() + static_cast<std::ptrdiff_t>(from), other.tokens.end());
        // No longer than the longer of the two (so within every length the models, the teacher's too, were built for).
        tokens.resize(std::min(tokens.size(), std::max(keep_whole, other.tokens.size())));
        spliced[i] = true;
    }
    return spliced;
}

double TextClassifyRun::accuracy_of(const TextClassificationData &data, const std::function<bool()> &stop, int64_t *evaluated) {
    int64_t hits = 0, done = 0;
    while (done < data.size() && !(done > 0 && stop())) {
        const int64_t n = std::min(kEvalBatch, data.size() - done);
        const nn::ClassifyBatch b = text_classify_batch(data, vocab_, done, n);
        const std::vector<int32_t> predicted = model_.predict(b);
        for (int64_t i = 0; i < n; i++) hits += predicted[i] == b.labels[i];
        done += n;
    }
    *evaluated = done;
    return done == 0 ? NAN : static_cast<double>(hits) / static_cast<double>(done);
}

double TextClassifyRun::accuracy(const std::function<bool()> &stop, int64_t *evaluated) {
    return accuracy_of(splits_.valid, stop, evaluated);
}

std::string TextClassifyRun::describe() const {
    std::string s = "task classify-text: " + file_name(cfg_.train) + " " + std::to_string(splits_.train.size()) + ", " +
                    file_name(cfg_.valid) + " " + std::to_string(splits_.valid.size());
    if (!cfg_.test.empty()) s += ", " + file_name(cfg_.test) + " " + std::to_string(splits_.test.size());
    return s + " examples, " + std::to_string(splits_.train.classes()) + " classes, lengths up to " +
           std::to_string(cfg_.seq.max_len) + ", vocabulary " + std::to_string(vocab_.size()) + " (min_count " +
           std::to_string(cfg_.seq.min_count) + ")";
}

std::vector<int32_t> TextClassifyRun::predict_all(const TextClassificationData &data) {
    return most_likely(logits_all(data), splits_.train.classes());
}

std::vector<double> TextClassifyRun::logits_all(const TextClassificationData &data) {
    std::vector<double> out;
    for (int64_t done = 0; done < data.size(); done += kEvalBatch) {
        const std::vector<double> z = model_.logits(text_classify_batch(data, vocab_, done, std::min(kEvalBatch, data.size() - done)));
        out.insert(out.end(), z.begin(), z.end());
    }
    return out;
}

void TextClassifyRun::calibrate_int8(const TextClassificationData &held_out) {
    model_.set_int8_calibration(true);
    predict_all(held_out);
    model_.set_int8_calibration(false);
}

void TextClassifyRun::finish(SeqResults &results) {
    model_.set_stochastic(false);
    const auto never = [] { return false; };
    int64_t evaluated = 0;
    results.attrs["train_accuracy"] = accuracy_of(splits_.train, never, &evaluated);
    results.attrs["valid_accuracy"] = accuracy_of(splits_.valid, never, &evaluated);
    results.attrs["test_accuracy"] = cfg_.test.empty() ? NAN : accuracy_of(splits_.test, never, &evaluated);
    results.attrs["vocabulary"] = vocab_.size();
}

}  // namespace qrnn::lm
