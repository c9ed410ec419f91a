#include "tasks/text_classification.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/error.h"

namespace qrnn::lm {
namespace {

constexpr const char *kTextLineFormat = "expected label<TAB>text";

struct RawTextExample {
    std::string label;
    std::vector<std::string> tokens;
};

bool holds_whitespace(const std::string &s) {
    return std::any_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); });
}

// One line "label<TAB>text" of `path` (line `number`), or a one-line error naming what is wrong with it.
RawTextExample parse_text_line(const std::string &path, int64_t number, const std::string &line) {
    auto bad = [&](const auto &...what) { fail(path, ":", number, ": ", what...); };
    if (!line.empty() && line.back() == '\r') bad("CRLF line ending (convert the file to LF endings, e.g. dos2unix)");
    if (line.empty()) bad("empty line (", kTextLineFormat, ")");
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) bad("no TAB between label and text (", kTextLineFormat, ")");
    if (line.find('\t', tab + 1) != std::string::npos) bad("a second TAB (", kTextLineFormat, ": one TAB, after the label)");
    RawTextExample e{line.substr(0, tab), {}};
    if (e.label.empty()) bad("empty label (the line starts with a TAB)");
    if (holds_whitespace(e.label)) bad("label '", e.label, "' holds whitespace");
    std::istringstream words(line.substr(tab + 1));
    for (std::string w; words >> w;) e.tokens.push_back(w);
    if (e.tokens.empty()) bad("empty text after the label '", e.label, "'");
    return e;
}

std::vector<RawTextExample> read_raw_text_examples(const std::string &path) {
    if (std::filesystem::is_directory(path)) fail(path, ": is a directory, not a text classification file");
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path, ": cannot read text classification file: ", std::strerror(errno));
    std::vector<RawTextExample> raw;
    std::string line;
    for (int64_t number = 1; std::getline(in, line); number++) raw.push_back(parse_text_line(path, number, line));
    if (in.bad()) fail(path, ": error reading text classification file");
    if (raw.empty()) fail(path, ": empty file (", kTextLineFormat, ", one example a line)");
    return raw;
}

std::string comma_joined_labels(const std::vector<std::string> &names) {
    std::string s;
    for (const auto &n : names) s += (s.empty() ? "" : ", ") + n;
    return s;
}

// The examples with label indices into `labels`; a label outside them is an error naming the file that set them.
TextClassificationData indexed_by_labels(const std::string &path, std::vector<RawTextExample> raw,
                                         const std::vector<std::string> &labels, const std::string &labels_from) {
    std::map<std::string, int32_t> index;
    for (size_t i = 0; i < labels.size(); i++) index.emplace(labels[i], static_cast<int32_t>(i));
    TextClassificationData data{path, labels, {}};
    for (size_t i = 0; i < raw.size(); i++) {
        auto it = index.find(raw[i].label);
        if (it == index.end())
            fail(path, ":", i + 1, ": label '", raw[i].label, "' is not among the labels of ", labels_from, " (",
                 comma_joined_labels(labels), ")");
        data.examples.push_back({it->second, std::move(raw[i].tokens)});
    }
    return data;
}

}  // namespace

TextClassificationData read_text_classification(const std::string &path) {
    std::vector<RawTextExample> raw = read_raw_text_examples(path);
    std::set<std::string> names;
    for (const auto &e : raw) names.insert(e.label);
    if (names.size() < 2)
        fail(path, ": only 1 class ('", *names.begin(), "'); a classification task needs at least 2 labels");
    return indexed_by_labels(path, std::move(raw), {names.begin(), names.end()}, path);
}

TextClassificationSplits read_text_classification_splits(const std::string &train_path, const std::string &valid_path,
                                                         const std::string &test_path) {
    TextClassificationSplits s;
    s.train = read_text_classification(train_path);
    auto held_out = [&](const std::string &path) {
        return indexed_by_labels(path, read_raw_text_examples(path), s.train.labels, train_path);
    };
    s.valid = held_out(valid_path);
    if (!test_path.empty()) s.test = held_out(test_path);
    else s.test.labels = s.train.labels;
    return s;
}

TextVocabulary TextVocabulary::from_training(const TextClassificationData &train, int64_t min_count) {
    if (min_count < 1) fail("vocabulary: min_count must be >= 1 (got ", min_count, ")");
    std::map<std::string, int64_t> counts;
    for (const auto &e : train.examples)
        for (const auto &w : e.tokens) counts[w]++;
    std::vector<std::pair<std::string, int64_t>> kept;
    for (const auto &[w, n] : counts)
        if (n >= min_count && w != "<unk>") kept.emplace_back(w, n);
    std::stable_sort(kept.begin(), kept.end(), [](const auto &a, const auto &b) { return a.second > b.second; });
    TextVocabulary v;
    v.words_ = {"<pad>", "<unk>"};
    v.ids_.emplace("<unk>", kUnknown);
    for (const auto &[w, n] : kept) {
        v.ids_.emplace(w, static_cast<int32_t>(v.words_.size()));
        v.words_.push_back(w);
    }
    return v;
}

int32_t TextVocabulary::id(const std::string &token) const {
    auto it = ids_.find(token);
    return it != ids_.end() ? it->second : kUnknown;
}

namespace {
void check_text_batch_range(const TextClassificationData &data, int64_t first, int64_t batch) {
    if (batch < 1 || first < 0 || first + batch > data.size())
        fail(data.path, ": examples [", first, ", ", first + batch, ") are not a batch of its ", data.size(), " examples");
}
}  // namespace

nn::ClassifyBatch text_classify_batch(const TextClassificationData &data, const TextVocabulary &vocab, int64_t first,
                                      int64_t batch) {
    check_text_batch_range(data, first, batch);
    nn::ClassifyBatch out;
    for (int64_t b = 0; b < batch; b++) {
        const TextExample &e = data.examples[first + b];
        std::vector<int32_t> ids;
        for (const auto &w : e.tokens) ids.push_back(vocab.id(w));
        out.T = std::max<int64_t>(out.T, static_cast<int64_t>(ids.size()));
        out.lengths.push_back(static_cast<int64_t>(ids.size()));
        out.labels.push_back(e.label);
        out.sequences.push_back(std::move(ids));
    }
    out.tokens.assign(out.T * batch, TextVocabulary::kPadding);
    out.words.assign(out.T * batch, "");
    for (int64_t b = 0; b < batch; b++)
        for (size_t t = 0; t < out.sequences[b].size(); t++) {
            out.tokens[t * batch + b] = out.sequences[b][t];
            out.words[t * batch + b] = data.examples[first + b].tokens[t];
        }
    return out;
}

std::vector<std::vector<std::string>> text_batch_tokens(const TextClassificationData &data, int64_t first, int64_t batch) {
    check_text_batch_range(data, first, batch);
    std::vector<std::vector<std::string>> out;
    for (int64_t b = 0; b < batch; b++) out.push_back(data.examples[first + b].tokens);
    return out;
}

}  // namespace qrnn::lm
