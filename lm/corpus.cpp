#include "lm/corpus.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace qrnn::lm {
namespace {

// Calls word(w) for every token of the file, "<eos>" at each line end.
template <class F>
void for_each_token(const std::string &path, F word) {
    if (std::filesystem::is_directory(path)) fail(path, ": is a directory, not a token file");
    std::ifstream in(path);
    if (!in) fail(path, ": cannot read token file: ", std::strerror(errno));
    std::string line, w;
    int64_t count = 0;
    while (std::getline(in, line)) {
        std::istringstream words(line);
        while (words >> w) word(w), count++;
        word(kEos);  // every line, as PyTorch's word_language_model does
    }
    if (in.bad()) fail(path, ": error reading token file");
    if (count == 0) fail(path, ": token file holds no words (empty)");
}

}  // namespace

int32_t Vocabulary::add(const std::string &word) {
    auto [it, fresh] = ids_.emplace(word, static_cast<int32_t>(words_.size()));
    if (fresh) words_.push_back(word);
    return it->second;
}

Vocabulary Vocabulary::from_file(const std::string &path, std::vector<int32_t> *tokens) {
    Vocabulary v;
    for_each_token(path, [&](const std::string &w) {
        const int32_t id = v.add(w);  // the id read_tokens gives: words are numbered in order of first appearance
        if (tokens) tokens->push_back(id);
    });
    v.add(kEos);
    v.add(kUnk);
    return v;
}

Vocabulary Vocabulary::from_words(std::vector<std::string> words) {
    Vocabulary v;
    for (auto &w : words)
        if (v.add(w) != v.size() - 1) fail("vocabulary: word '", w, "' listed twice");
    if (!v.ids_.count(kUnk)) fail("vocabulary: no ", kUnk, " entry");
    return v;
}

int32_t Vocabulary::id(const std::string &word) const {
    auto it = ids_.find(word);
    return it != ids_.end() ? it->second : ids_.at(kUnk);
}

std::vector<int32_t> read_tokens(const std::string &path, const Vocabulary &vocab) {
    std::vector<int32_t> ids;
    for_each_token(path, [&](const std::string &w) { ids.push_back(vocab.id(w)); });
    return ids;
}

double unigram_perplexity(const std::vector<int32_t> &train, const std::vector<int32_t> &eval, int64_t vocab_size) {
    std::vector<double> counts(static_cast<size_t>(vocab_size), 1.0);
    for (int32_t t : train) counts[t] += 1;
    const double total = static_cast<double>(train.size() + vocab_size);
    double nll = 0;
    for (int32_t t : eval) nll -= std::log(counts[t] / total);
    return std::exp(nll / static_cast<double>(eval.size()));
}

BatchStream::BatchStream(const std::vector<int32_t> &tokens, int64_t batch, int64_t bptt, const std::string &name)
    : name_(name), batch_(batch), bptt_(bptt), stream_len_(batch < 1 ? 0 : static_cast<int64_t>(tokens.size()) / batch) {
    if (batch < 1 || bptt < 1) fail(name, ": batch and bptt must be >= 1 (got ", batch, ", ", bptt, ")");
    if (stream_len_ < 2)
        fail(name, ": ", tokens.size(), " tokens are too few for ", batch, " streams (need at least 2 per stream)");
    streams_.assign(tokens.begin(), tokens.begin() + batch * stream_len_);
}

int64_t BatchStream::tokens_per_batch(int64_t i) const {
    return std::min(bptt_, stream_len_ - 1 - i * bptt_) * batch_;
}

Batch BatchStream::batch(int64_t i) const {
    if (i < 0 || i >= batches()) fail(name_, ": batch ", i, " outside [0, ", batches(), ")");
    Batch b;
    b.B = batch_;
    b.T = tokens_per_batch(i) / batch_;
    b.inputs.resize(static_cast<size_t>(b.T * b.B));
    b.targets.resize(b.inputs.size());
    for (int64_t t = 0; t < b.T; t++)
        for (int64_t s = 0; s < b.B; s++) {
            const int64_t at = s * stream_len_ + i * bptt_ + t;
            b.inputs[t * b.B + s] = streams_[at];
            b.targets[t * b.B + s] = streams_[at + 1];
        }
    return b;
}

}  // namespace qrnn::lm
