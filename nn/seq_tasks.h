// Reproducible synthetic sequence tasks (issue 11 item 5; no public data set of that size ships here). Batch
// `index` of split 0 (training) or 1 (held-out) is a pure function of (task, batch size, seed, split, index).
//   reverse / sort (transduction): a source of random length in [min_len, max_len] over tokens 0..vocab-1; the
//     target is the source reversed (or sorted ascending), then EOS. Symbols: the vocab, BOS = vocab, EOS = vocab+1.
//   classify (count): tokens 0..vocab-1 of random length; label 1 when token A (0) occurs more often than
//     token B (1), label 0 when B occurs more often. Ties are broken by turning one token into the label's
//     winner, and the label is drawn first, so the classes are balanced (chance: 50%).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/tensor.h"

namespace qrnn::nn {

struct TransductionTask {
    bool sort = false;  // false: reverse the source; true: sort it
    int64_t vocab = 10, min_len = 5, max_len = 40;
    int64_t symbols() const { return vocab + 2; }
    int64_t bos() const { return vocab; }
    int64_t eos() const { return vocab + 1; }
    void validate() const;  // throws qrnn::Error naming a bad value
};

struct Seq2SeqBatch {
    std::vector<std::vector<int64_t>> sources, targets;  // per sequence: tokens; targets = transformed + EOS
    Tensor<float> source;     // [S][B][symbols] one-hot, zeros past each length (S = longest source)
    std::vector<int64_t> lengths;
    Tensor<float> target_in;  // [T][B][symbols] BOS then the target tokens (teacher forcing), T = longest target
};
Seq2SeqBatch transduction_batch(const TransductionTask &task, int64_t batch, uint32_t seed, uint32_t split, uint64_t index);

struct CountTask {
    int64_t vocab = 10, min_len = 5, max_len = 40;
    static constexpr int64_t kTokenA = 0, kTokenB = 1, kClasses = 2;
    void validate() const;  // throws qrnn::Error naming a bad value (vocab must hold A and B)
};

struct ClassifyBatch {
    std::vector<std::vector<int32_t>> sequences;
    std::vector<int32_t> labels;   // per sequence
    std::vector<int64_t> lengths;  // per sequence
    int64_t T = 0;                 // the longest length
    std::vector<int32_t> tokens;   // [T][B] row-major, 0 past each length (the model masks it)
    // The tokens as text, for a projection front end (tasks/classifier_front.h), which hashes these when present
    // and else each id's decimal string.
    std::vector<std::string> words;  // [T][B] row-major, "" past each length; empty vector when the task has ids only
};
ClassifyBatch count_batch(const CountTask &task, int64_t batch, uint32_t seed, uint32_t split, uint64_t index);

}  // namespace qrnn::nn
