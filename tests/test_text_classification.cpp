// Text classification files and their bag-of-words floor (tasks/text_classification.h, tasks/bag_of_words.h,
// docs/text_tasks.md): the reader round-trips, every malformed line is one error naming file, line and what is
// wrong; the vocabulary and batches follow nn::ClassifyBatch; the bag-of-words gradient matches finite
// differences, it separates a separable task and stays at chance on random labels; the shipped corpus-source
// files parse, are balanced and share no sentence between splits. (Regenerating them: tests/test_corpus_source_task.py.)
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "core/error.h"
#include "core/hash_rng.h"
#include "tasks/bag_of_words.h"
#include "tasks/text_classification.h"
#include "tests/support/cli.h"
#include "tests/support/error_text.h"

namespace qrnn::test {
namespace {

using lm::read_text_classification;


// The error reading a scratch file holding `text`, with the file's path replaced by "FILE".
std::string read_error(const std::string &text) {
    const std::string path = write_scratch("bad.tsv", text);
    std::string message = error_of([&] { read_text_classification(path); });
    if (message.rfind(path, 0) == 0) message = "FILE" + message.substr(path.size());
    return message;
}

TEST(TextClassification, ReadsExamplesWithSortedLabelsAndWhitespaceTokens) {
    const std::string path = write_scratch("ok.tsv", "wiki\tthe  cat sat\nptb\ta b\nwiki\tc");  // no final newline
    const lm::TextClassificationData d = read_text_classification(path);
    EXPECT_EQ(d.path, path);
    EXPECT_EQ(d.labels, (std::vector<std::string>{"ptb", "wiki"}));
    ASSERT_EQ(d.size(), 3);
    EXPECT_EQ(d.classes(), 2);
    EXPECT_EQ(d.examples[0].label, 1);
    EXPECT_EQ(d.examples[0].tokens, (std::vector<std::string>{"the", "cat", "sat"}));
    EXPECT_EQ(d.examples[1].label, 0);
    EXPECT_EQ(d.examples[1].tokens, (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(d.examples[2].tokens, (std::vector<std::string>{"c"}));
}

TEST(TextClassification, EachMalformedLineIsOneErrorNamingFileAndLine) {
    const std::string good = "a\tx y\n";
    EXPECT_EQ(read_error(good + "b\tz\r\n"), "FILE:2: CRLF line ending (convert the file to LF endings, e.g. dos2unix)");
    EXPECT_EQ(read_error(good + "b z\n"), "FILE:2: no TAB between label and text (expected label<TAB>text)");
    EXPECT_EQ(read_error(good + "b\tz\tw\n"), "FILE:2: a second TAB (expected label<TAB>text: one TAB, after the label)");
    EXPECT_EQ(read_error(good + "\tz\n"), "FILE:2: empty label (the line starts with a TAB)");
    EXPECT_EQ(read_error(good + "b\t  \n"), "FILE:2: empty text after the label 'b'");
    EXPECT_EQ(read_error(good + "b\t\n"), "FILE:2: empty text after the label 'b'");
    EXPECT_EQ(read_error(good + "\n" + good), "FILE:2: empty line (expected label<TAB>text)");
    EXPECT_EQ(read_error(good + "b c\tz\n"), "FILE:2: label 'b c' holds whitespace");
    EXPECT_EQ(read_error(good + good + "b z\n"), "FILE:3: no TAB between label and text (expected label<TAB>text)");
}

TEST(TextClassification, WholeFileErrorsNameTheFile) {
    EXPECT_EQ(read_error(""), "FILE: empty file (expected label<TAB>text, one example a line)");
    EXPECT_EQ(read_error("a\tx\na\ty\n"), "FILE: only 1 class ('a'); a classification task needs at least 2 labels");
    const std::string missing = scratch_path("missing.tsv");
    EXPECT_EQ(error_of([&] { read_text_classification(missing); }),
              missing + ": cannot read text classification file: No such file or directory");
    const std::string dir = scratch_path("a_dir");
    std::filesystem::create_directories(dir);
    EXPECT_EQ(error_of([&] { read_text_classification(dir); }), dir + ": is a directory, not a text classification file");
}

TEST(TextClassification, ValidAndTestUseTrainLabelsAndRejectUnknownOnes) {
    const std::string train = write_scratch("train.tsv", "b\tx\na\ty\nc\tz\n");
    const std::string valid = write_scratch("valid.tsv", "c\tx\n");  // one class is fine outside train
    const std::string test = write_scratch("test.tsv", "a\tx\nb\ty\n");
    const lm::TextClassificationSplits s = lm::read_text_classification_splits(train, valid, test);
    EXPECT_EQ(s.valid.labels, (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_EQ(s.valid.examples[0].label, 2);
    EXPECT_EQ(s.test.examples[1].label, 1);
    EXPECT_EQ(lm::read_text_classification_splits(train, valid).test.size(), 0);

    const std::string unknown = write_scratch("unknown.tsv", "a\tx\nd\ty\n");
    EXPECT_EQ(error_of([&] { lm::read_text_classification_splits(train, unknown); }),
              unknown + ":2: label 'd' is not among the labels of " + train + " (a, b, c)");
    EXPECT_EQ(error_of([&] { lm::read_text_classification_splits(train, valid, unknown); }),
              unknown + ":2: label 'd' is not among the labels of " + train + " (a, b, c)");
    const std::string crlf = write_scratch("crlf.tsv", "a\tx\r\n");
    EXPECT_EQ(error_of([&] { lm::read_text_classification_splits(train, crlf); }),
              crlf + ":1: CRLF line ending (convert the file to LF endings, e.g. dos2unix)");
}

TEST(TextClassification, VocabularyReservesPaddingAndUnknown) {
    const std::string path = write_scratch("vocab.tsv", "a\tz y y <unk> <pad>\nb\tx y z z\n");
    const lm::TextClassificationData d = read_text_classification(path);
    const lm::TextVocabulary all = lm::TextVocabulary::from_training(d, 1);
    // y 3, z 3 (byte order on ties), then <pad> 1 and x 1; the corpus's own <unk> is id 1.
    EXPECT_EQ(all.words(), (std::vector<std::string>{"<pad>", "<unk>", "y", "z", "<pad>", "x"}));
    EXPECT_EQ(all.id("y"), 2);
    EXPECT_EQ(all.id("<unk>"), lm::TextVocabulary::kUnknown);
    EXPECT_EQ(all.id("<pad>"), 4);  // a text token, never the padding id
    EXPECT_EQ(all.id("never-seen"), lm::TextVocabulary::kUnknown);
    const lm::TextVocabulary frequent = lm::TextVocabulary::from_training(d, 2);
    EXPECT_EQ(frequent.words(), (std::vector<std::string>{"<pad>", "<unk>", "y", "z"}));
    EXPECT_EQ(frequent.id("x"), lm::TextVocabulary::kUnknown);
    EXPECT_EQ(error_of([&] { lm::TextVocabulary::from_training(d, 0); }), "vocabulary: min_count must be >= 1 (got 0)");
}

TEST(TextClassification, ClassifyBatchHoldsIdsPaddedWithZero) {
    const std::string path = write_scratch("batch.tsv", "b\tq\na\ty z y\nb\tz\na\tnew y\n");
    const lm::TextClassificationData d = read_text_classification(path);
    const lm::TextVocabulary v = lm::TextVocabulary::from_training(d, 1);  // y 2, z 3, new 4, q 5
    const nn::ClassifyBatch b = lm::text_classify_batch(d, v, 1, 3);
    EXPECT_EQ(b.T, 3);
    EXPECT_EQ(b.lengths, (std::vector<int64_t>{3, 1, 2}));
    EXPECT_EQ(b.labels, (std::vector<int32_t>{0, 1, 0}));
    EXPECT_EQ(b.sequences[0], (std::vector<int32_t>{2, 3, 2}));
    // [T][B] row-major, 0 past each length.
    EXPECT_EQ(b.tokens, (std::vector<int32_t>{2, 3, 4, 3, 0, 2, 2, 0, 0}));
    EXPECT_EQ(b.words, (std::vector<std::string>{"y", "z", "new", "z", "", "y", "y", "", ""}));
    const lm::TextVocabulary small = lm::TextVocabulary::from_training(d, 2);  // only y
    EXPECT_EQ(lm::text_classify_batch(d, small, 3, 1).tokens, (std::vector<int32_t>{1, 2}));
    EXPECT_EQ(lm::text_classify_batch(d, small, 3, 1).words, (std::vector<std::string>{"new", "y"}));  // the text, not <unk>
    EXPECT_EQ(lm::text_batch_tokens(d, 3, 1), (std::vector<std::vector<std::string>>{{"new", "y"}}));
    EXPECT_EQ(error_of([&] { lm::text_classify_batch(d, v, 2, 3); }),
              path + ": examples [2, 5) are not a batch of its 4 examples");
    EXPECT_NE(error_of([&] { lm::text_batch_tokens(d, 0, 0); }), "<no error>");
}

// ---- bag of words ----------------------------------------------------------------------------------------------

TEST(BagOfWords, GradientMatchesFiniteDifferences) {
    lm::BagOfWords model(4, 3);
    for (size_t i = 0; i < model.values().size(); i++)
        model.values()[i] = hash_uniform(hash_at<uint32_t>(7, static_cast<uint32_t>(i), 0, 0), -1, 1);
    const std::vector<lm::BagOfWordsExample> examples = {{{0, 2}, 1}, {{1}, 0}, {{0, 1, 3}, 2}, {{3}, 1}};
    const double l2 = 0.3;
    std::vector<double> gradient;
    model.loss(examples, l2, &gradient);
    ASSERT_EQ(gradient.size(), static_cast<size_t>(model.parameters()));
    EXPECT_EQ(model.parameters(), 4 * 3 + 3);
    const double h = 1e-6;
    for (size_t i = 0; i < gradient.size(); i++) {
        const double keep = model.values()[i];
        model.values()[i] = keep + h;
        const double up = model.loss(examples, l2, nullptr);
        model.values()[i] = keep - h;
        const double down = model.loss(examples, l2, nullptr);
        model.values()[i] = keep;
        EXPECT_NEAR(gradient[i], (up - down) / (2 * h), 1e-8) << "parameter " << i;
    }
}

// n examples "label<TAB>text" of `words` tokens each from a vocabulary of `vocab` words, drawn from `seed`; with
// `separable`, class a always holds "alpha" and class b "beta"; otherwise the label is drawn apart from the text.
std::string synthetic_task(uint32_t seed, int n, int words, int vocab, bool separable) {
    const uint32_t key = stream_key(seed, 0);
    std::string text;
    for (int i = 0; i < n; i++) {
        const bool b = hash_at<uint32_t>(key, static_cast<uint32_t>(i), 0, 0) % 2;
        text += std::string(b ? "b" : "a") + "\t" + (separable ? (b ? "beta" : "alpha") : "w0");
        for (int k = 0; k < words; k++) {
            const uint32_t word = hash_at<uint32_t>(key, static_cast<uint32_t>(i), 1, static_cast<uint32_t>(k)) % vocab;
            text += " w" + std::to_string(word);
        }
        text += "\n";
    }
    return text;
}

lm::BagOfWordsResult train_synthetic(const std::string &name, uint32_t seed, bool separable, int n_train) {
    const std::string train = write_scratch(name + "_train.tsv", synthetic_task(seed, n_train, 8, 200, separable));
    const std::string valid = write_scratch(name + "_valid.tsv", synthetic_task(seed + 1, 400, 8, 200, separable));
    const std::string test = write_scratch(name + "_test.tsv", synthetic_task(seed + 2, 1000, 8, 200, separable));
    lm::BagOfWordsConfig config;
    config.epochs = 40;  // a small task: the default 5 epochs are ~70 steps here
    return lm::train_bag_of_words(lm::read_text_classification_splits(train, valid, test), config);
}

TEST(BagOfWords, SeparatesASeparableTask) {
    const lm::BagOfWordsResult r = train_synthetic("separable", 11, true, 400);
    EXPECT_EQ(r.train_accuracy, 1.0);
    EXPECT_GT(r.valid_accuracy, 0.99);  // a held-out word of weight as large as alpha's can still outvote it
    EXPECT_GT(r.test_accuracy, 0.99);
    EXPECT_EQ(r.parameters, (r.vocabulary - 1) * 2 + 2);
    EXPECT_LT(r.epoch_losses.back(), r.epoch_losses.front());
}

TEST(BagOfWords, StaysAtChanceOnRandomLabels) {
    // Held-out accuracy 0.5 +- 0.016 (1000 examples): outside [0.44, 0.56] it learned what is not there, or
    // learned it backwards.
    const lm::BagOfWordsResult r = train_synthetic("random", 21, false, 1000);
    EXPECT_GT(r.train_accuracy, 0.6);  // it fits the training labels' noise (200 features for 1000 labels)
    EXPECT_GT(r.test_accuracy, 0.44);
    EXPECT_LT(r.test_accuracy, 0.56);
}

TEST(BagOfWords, IsDeterministicAndRejectsBadConfig) {
    EXPECT_EQ(train_synthetic("again1", 21, false, 300).epoch_losses, train_synthetic("again2", 21, false, 300).epoch_losses);
    lm::BagOfWordsConfig c;
    c.batch = 0;
    EXPECT_EQ(error_of([&] { lm::train_bag_of_words({}, c); }),
              "bag of words: min_count, epochs and batch must be >= 1 (got 1, 5, 0)");
    c = {}, c.learning_rate = 0;
    EXPECT_EQ(error_of([&] { lm::train_bag_of_words({}, c); }),
              "bag of words: learning rate must be > 0 and l2 >= 0 (got 0, 0.0001)");
}

// ---- the shipped corpus-source task (tools/make_corpus_source_task.py) -----------------------------------------

std::string corpus_source(const std::string &split) {
    return std::string(QRNN_SOURCE_DIR) + "/data/corpus-source/" + split + ".tsv";
}

lm::TextClassificationSplits corpus_source_splits() {
    return lm::read_text_classification_splits(corpus_source("train"), corpus_source("valid"), corpus_source("test"));
}

std::string joined(const std::vector<std::string> &tokens) {
    std::string s;
    for (const auto &t : tokens) s += (s.empty() ? "" : " ") + t;
    return s;
}

TEST(CorpusSource, EveryLineParsesAndEachSplitIsBalanced) {
    const lm::TextClassificationSplits s = corpus_source_splits();
    EXPECT_EQ(s.train.labels, (std::vector<std::string>{"ptb", "wiki"}));
    for (const lm::TextClassificationData *d : {&s.train, &s.valid, &s.test}) {
        ASSERT_GT(d->size(), 1000) << d->path;
        int64_t ptb = 0;
        for (const auto &e : d->examples) {
            ptb += e.label == 0;
            EXPECT_GE(e.tokens.size(), 4u) << d->path;
            EXPECT_LE(e.tokens.size(), 60u) << d->path;
        }
        const double share = static_cast<double>(ptb) / static_cast<double>(d->size());
        EXPECT_GE(share, 0.45) << d->path;
        EXPECT_LE(share, 0.55) << d->path;
    }
    EXPECT_GT(s.train.size(), 6 * s.valid.size());
}

TEST(CorpusSource, NoSentenceIsInTwoSplitsOrTwice) {
    const lm::TextClassificationSplits s = corpus_source_splits();
    std::map<std::string, std::string> seen;  // sentence -> the file it is in
    for (const lm::TextClassificationData *d : {&s.train, &s.valid, &s.test})
        for (int64_t i = 0; i < d->size(); i++) {
            auto [it, fresh] = seen.emplace(joined(d->examples[i].tokens), d->path);
            EXPECT_TRUE(fresh) << d->path << ":" << i + 1 << " repeats a sentence of " << it->second;
        }
}

TEST(CorpusSource, BagOfWordsClearlyBeatsChance) {
    const lm::BagOfWordsResult r = lm::train_bag_of_words(corpus_source_splits(), lm::BagOfWordsConfig{});
    std::printf("bag of words on corpus-source: train %.4f valid %.4f test %.4f, vocabulary %lld, parameters %lld\n",
                r.train_accuracy, r.valid_accuracy, r.test_accuracy, static_cast<long long>(r.vocabulary),
                static_cast<long long>(r.parameters));
    EXPECT_GT(r.valid_accuracy, 0.85);
    EXPECT_GT(r.test_accuracy, 0.85);
}

}  // namespace
}  // namespace qrnn::test
