// Word-level corpora in the PTB / WikiText format: tokens separated by spaces, "<eos>" appended at the end of
// each line; the vocabulary comes from the training split (first-appearance order), other words map to <unk>.
// Batches follow the standard batchify: the token stream cut into B equal streams (the tail dropped), read in
// windows of T steps; the targets are the inputs shifted by one.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace qrnn::lm {

constexpr const char *kEos = "<eos>", *kUnk = "<unk>";

class Vocabulary {
public:
    // Every word of the file, plus <eos> and <unk>. Throws qrnn::Error naming the file (unreadable, empty).
    // With tokens: also the file's tokens as ids (as read_tokens), from the same single read of the file (which
    // may be a pipe, e.g. <(cat train.txt)).
    static Vocabulary from_file(const std::string &path, std::vector<int32_t> *tokens = nullptr);
    static Vocabulary from_words(std::vector<std::string> words);  // as saved (e.g. in a checkpoint)
    int32_t id(const std::string &word) const;                     // <unk> for an unknown word
    const std::vector<std::string> &words() const { return words_; }
    int64_t size() const { return static_cast<int64_t>(words_.size()); }

private:
    std::vector<std::string> words_;
    std::unordered_map<std::string, int32_t> ids_;
    int32_t add(const std::string &word);
};

// The file's tokens as ids. Throws qrnn::Error "<path>: ..." when it cannot be read or holds no token.
std::vector<int32_t> read_tokens(const std::string &path, const Vocabulary &vocab);

// Perplexity of the add-one-smoothed unigram model of `train` on `eval`: the baseline an LM must beat.
double unigram_perplexity(const std::vector<int32_t> &train, const std::vector<int32_t> &eval, int64_t vocab_size);

struct Batch {
    int64_t T = 0, B = 0;
    std::vector<int32_t> inputs, targets;  // [T][B]
};

class BatchStream {
public:
    // Throws qrnn::Error when the corpus has fewer than 2 tokens per stream.
    BatchStream(const std::vector<int32_t> &tokens, int64_t batch, int64_t bptt, const std::string &name);
    int64_t batches() const { return (stream_len_ - 1 + bptt_ - 1) / bptt_; }  // the last may be shorter
    int64_t tokens_per_batch(int64_t i) const;
    Batch batch(int64_t i) const;

private:
    std::vector<int32_t> streams_;  // [B][stream_len]
    std::string name_;              // the token file, for errors
    int64_t batch_, bptt_, stream_len_;
};

}  // namespace qrnn::lm
