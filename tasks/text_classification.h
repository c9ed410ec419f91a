// Text classification files (docs/text_tasks.md): one example a line, `label<TAB>text`, the text's tokens
// separated by whitespace; line n of a file is its example n-1 (no blank or comment lines). Read into examples
// with label indices into the sorted label names, a vocabulary from the training split, and nn::ClassifyBatch
// batches of token ids for the sequence classifier (tasks/seq_classifier.h); the raw token strings stay
// available for the projection (nn/projection.h hashes strings, not ids).
// Bad input throws qrnn::Error, one line "<file>:<line>: <what is wrong>" (or "<file>: ..." for the whole file).
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "nn/seq_tasks.h"

namespace qrnn::lm {

struct TextExample {
    int32_t label = 0;                // index into TextClassificationData::labels
    std::vector<std::string> tokens;  // the text split on whitespace, never empty
};

struct TextClassificationData {
    std::string path;                  // the file it was read from
    std::vector<std::string> labels;   // sorted, distinct: label index i names labels[i]
    std::vector<TextExample> examples; // examples[i] is line i + 1 of the file
    int64_t size() const { return static_cast<int64_t>(examples.size()); }
    int64_t classes() const { return static_cast<int64_t>(labels.size()); }
};

// Throws qrnn::Error naming the file (and line): unreadable, empty, a line with a CRLF ending, no TAB, a second
// TAB, an empty or space-holding label, empty text; or fewer than 2 classes in the file.
TextClassificationData read_text_classification(const std::string &path);

struct TextClassificationSplits {
    TextClassificationData train, valid, test;  // valid and test index train's labels; test is empty without a path
};
// Train (at least 2 classes), valid and, when test_path is not empty, test; a valid or test label that is not
// among train's is an error naming its file, line and label.
TextClassificationSplits read_text_classification_splits(const std::string &train_path, const std::string &valid_path,
                                                         const std::string &test_path = "");

// Token ids for a classifier: 0 is padding (nn::ClassifyBatch pads with 0), 1 is <unk> (every word outside the
// vocabulary, and the corpora's own "<unk>"), then the training words with count >= min_count, most frequent first
// (ties in byte order).
class TextVocabulary {
public:
    static constexpr int32_t kPadding = 0, kUnknown = 1;
    // Throws qrnn::Error when min_count < 1.
    static TextVocabulary from_training(const TextClassificationData &train, int64_t min_count);
    int32_t id(const std::string &token) const;  // kUnknown for a word outside the vocabulary
    const std::vector<std::string> &words() const { return words_; }  // words()[id]; "<pad>" and "<unk>" first
    int64_t size() const { return static_cast<int64_t>(words_.size()); }

private:
    std::vector<std::string> words_;
    std::unordered_map<std::string, int32_t> ids_;  // every word but the padding
};

// Examples [first, first + batch) of `data` as a batch of ids (tokens [T][B], 0 past each length) and of their raw
// tokens (words [T][B], "" past each length: out-of-vocabulary words keep their text). Throws qrnn::Error when the
// range is empty or outside the data.
nn::ClassifyBatch text_classify_batch(const TextClassificationData &data, const TextVocabulary &vocab, int64_t first,
                                      int64_t batch);
// The same examples' raw tokens, the input of nn::project_sequence.
std::vector<std::vector<std::string>> text_batch_tokens(const TextClassificationData &data, int64_t first, int64_t batch);

}  // namespace qrnn::lm
