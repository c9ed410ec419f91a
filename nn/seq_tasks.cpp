#include "nn/seq_tasks.h"

#include <algorithm>

#include "core/error.h"
#include "core/hash_rng.h"
#include "core/streams.h"

namespace qrnn::nn {
namespace {

void check_lengths(int64_t min_len, int64_t max_len) {
    if (min_len < 1 || max_len < min_len) fail("lengths must satisfy 1 <= min_len <= max_len (got ", min_len, "..", max_len, ")");
}

// Draws of one batch of one split: draw(b, pos) for sequence b; pos 0xFFFFFFFF gives its length, 0xFFFFFFFE its label.
struct Draws {
    uint32_t key, index;
    uint32_t operator()(uint64_t b, uint32_t pos) const { return hash_at<uint32_t>(key, index, static_cast<uint32_t>(b), pos); }
    int64_t length(uint64_t b, int64_t lo, int64_t hi) const { return lo + (*this)(b, 0xFFFFFFFFu) % static_cast<uint32_t>(hi - lo + 1); }
};

}  // namespace

void TransductionTask::validate() const {
    if (vocab < 1) fail("vocab must be >= 1 (got ", vocab, ")");
    check_lengths(min_len, max_len);
}

Seq2SeqBatch transduction_batch(const TransductionTask &task, int64_t batch, uint32_t seed, uint32_t split, uint64_t index) {
    task.validate();
    const Draws draw{stream_key(seed, streams::transduction_data(split)), static_cast<uint32_t>(index)};
    Seq2SeqBatch out;
    int64_t S = 0;
    for (int64_t b = 0; b < batch; b++) {
        const int64_t len = draw.length(b, task.min_len, task.max_len);
        std::vector<int64_t> tokens(len);
        for (int64_t i = 0; i < len; i++) tokens[i] = draw(b, static_cast<uint32_t>(i)) % static_cast<uint32_t>(task.vocab);
        std::vector<int64_t> target(tokens.rbegin(), tokens.rend());
        if (task.sort) std::sort(target.begin(), target.end());
        target.push_back(task.eos());
        out.lengths.push_back(len);
        out.sources.push_back(std::move(tokens));
        out.targets.push_back(std::move(target));
        S = std::max(S, len);
    }
    const int64_t T = S + 1, V = task.symbols();
    out.source = Tensor<float>({S, batch, V});
    out.target_in = Tensor<float>({T, batch, V});
    for (int64_t b = 0; b < batch; b++) {
        for (size_t i = 0; i < out.sources[b].size(); i++) out.source(i, b, out.sources[b][i]) = 1;
        out.target_in(0, b, task.bos()) = 1;
        for (size_t i = 0; i + 1 < out.targets[b].size(); i++) out.target_in(i + 1, b, out.targets[b][i]) = 1;
    }
    return out;
}

void CountTask::validate() const {
    if (vocab < 2) fail("vocab must be >= 2 for classify (tokens A = 0 and B = 1; got ", vocab, ")");
    check_lengths(min_len, max_len);
}

ClassifyBatch count_batch(const CountTask &task, int64_t batch, uint32_t seed, uint32_t split, uint64_t index) {
    task.validate();
    const Draws draw{stream_key(seed, streams::counting_data(split)), static_cast<uint32_t>(index)};
    ClassifyBatch out;
    for (int64_t b = 0; b < batch; b++) {
        const int64_t len = draw.length(b, task.min_len, task.max_len);
        const int32_t label = static_cast<int32_t>(draw(b, 0xFFFFFFFEu) % 2);
        std::vector<int32_t> seq(len);
        int64_t a = 0, bb = 0;
        for (int64_t i = 0; i < len; i++) {
            seq[i] = static_cast<int32_t>(draw(b, static_cast<uint32_t>(i)) % static_cast<uint32_t>(task.vocab));
            a += seq[i] == CountTask::kTokenA, bb += seq[i] == CountTask::kTokenB;
        }
        const int32_t winner = label == 1 ? CountTask::kTokenA : CountTask::kTokenB, loser = CountTask::kTokenA + CountTask::kTokenB - winner;
        if (a != bb && (a > bb) != (label == 1))  // the other class: swap A and B (the distribution is symmetric)
            for (auto &t : seq) t = t == winner ? loser : t == loser ? winner : t;
        if (a == bb)  // a tie: the first token (from a drawn position) that is not the winner becomes it
            for (int64_t i = 0, start = draw(b, 0xFFFFFFFDu) % static_cast<uint32_t>(len); i < len; i++) {
                int32_t &t = seq[(start + i) % len];
                if (t != winner) {
                    t = winner;
                    break;
                }
            }
        out.T = std::max(out.T, len);
        out.lengths.push_back(len);
        out.labels.push_back(label);
        out.sequences.push_back(std::move(seq));
    }
    out.tokens.assign(out.T * batch, 0);
    for (int64_t b = 0; b < batch; b++)
        for (size_t t = 0; t < out.sequences[b].size(); t++) out.tokens[t * batch + b] = out.sequences[b][t];
    return out;
}

}  // namespace qrnn::nn
