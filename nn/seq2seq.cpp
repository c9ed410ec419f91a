#include "nn/seq2seq.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/streams.h"
#include "runtime/seeded_fill.h"

namespace qrnn::nn {

Seq2Seq::Seq2Seq(const EncDecConfig &cfg, int64_t symbols) : net_(cfg), symbols_(symbols) {
    if (cfg.encoder.input != symbols || cfg.decoder.input != symbols)
        fail("seq2seq: encoder and decoder inputs must be the ", symbols, " symbols wide (one-hot)");
    const int64_t m = cfg.hidden();
    w_ = Tensor<float>({m, symbols}), b_ = Tensor<float>({symbols});
    dw_ = Tensor<float>(w_.shape), db_ = Tensor<float>(b_.shape);
    seeded_fill(w_, cfg.encoder.seed, streams::kSeq2SeqOutput, 1.0 / std::sqrt(static_cast<double>(m)));
}

Tensor<float> Seq2Seq::logits(const Tensor<float> &out) const {
    const int64_t T = out.dim(0), B = out.dim(1), m = out.dim(2), V = symbols_;
    Tensor<float> z({T, B, V});
    for (int64_t r = 0; r < T * B; r++) {
        float *zr = &z.data[r * V];
        std::copy(b_.data.begin(), b_.data.end(), zr);
        for (int64_t h = 0; h < m; h++) {
            const float o = out.data[r * m + h], *wr = &w_.data[h * V];
            for (int64_t v = 0; v < V; v++) zr[v] += o * wr[v];
        }
    }
    return z;
}

double Seq2Seq::loss_and_grads(const Seq2SeqBatch &batch) {
    net_.zero_grads();
    std::fill(dw_.data.begin(), dw_.data.end(), 0.0f);
    std::fill(db_.data.begin(), db_.data.end(), 0.0f);
    const Tensor<float> &out = net_.forward(batch.source, batch.lengths, batch.target_in, &tape_);
    const int64_t T = out.dim(0), B = out.dim(1), m = out.dim(2), V = symbols_;
    Tensor<float> z = logits(out), dout({T, B, m});
    int64_t count = 0;
    for (auto &t : batch.targets) count += static_cast<int64_t>(t.size());
    double loss = 0;
    std::vector<float> p(V);
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < B; b++) {
            if (t >= static_cast<int64_t>(batch.targets[b].size())) continue;  // padding: no loss, no gradient
            const int64_t label = batch.targets[b][t], r = t * B + b;
            const float *zr = &z.data[r * V];
            const float top = *std::max_element(zr, zr + V);
            double sum = 0;
            for (int64_t v = 0; v < V; v++) sum += p[v] = std::exp(zr[v] - top);
            loss -= zr[label] - top - std::log(sum);
            // dlogits = (softmax - onehot) / count; dout = W dlogits; dW += out dlogits^T; db += dlogits.
            for (int64_t v = 0; v < V; v++) p[v] = static_cast<float>((p[v] / sum - (v == label)) / count);
            const float *o = &out.data[r * m];
            float *d = &dout.data[r * m];
            for (int64_t h = 0; h < m; h++) {
                const float *wr = &w_.data[h * V];
                float *dwr = &dw_.data[h * V], acc = 0;
                for (int64_t v = 0; v < V; v++) acc += wr[v] * p[v], dwr[v] += o[h] * p[v];
                d[h] = acc;
            }
            for (int64_t v = 0; v < V; v++) db_.data[v] += p[v];
        }
    net_.backward(tape_, dout, nullptr, nullptr);
    return loss / count;
}

std::vector<std::vector<int64_t>> Seq2Seq::greedy_decode(const Tensor<float> &source, const std::vector<int64_t> &lengths,
                                                         int64_t bos, int64_t eos, int64_t max_steps, Tensor<float> *alpha) {
    const int64_t B = source.dim(1), S = source.dim(0), V = symbols_;
    Encoded enc = net_.encode(source, lengths);
    std::vector<State> states = net_.decoder_state(B);
    std::vector<std::vector<int64_t>> decoded(B);
    std::vector<bool> done(B, false);
    std::vector<int64_t> previous(B, bos);
    if (alpha) *alpha = Tensor<float>({B, max_steps, S});
    Tensor<float> out, step_alpha;
    for (int64_t step = 0; step < max_steps; step++) {
        Tensor<float> x({1, B, V});
        for (int64_t b = 0; b < B; b++) x(0, b, previous[b]) = 1;
        net_.decode(enc, x, states, out, alpha ? &step_alpha : nullptr);
        Tensor<float> z = logits(out);
        bool all_done = true;
        for (int64_t b = 0; b < B; b++) {
            const float *zr = &z.data[b * V];
            previous[b] = std::max_element(zr, zr + V) - zr;
            if (alpha && !step_alpha.data.empty())
                std::copy_n(&step_alpha(b, 0, 0), S, &(*alpha)(b, step, 0));
            if (done[b]) continue;
            if (previous[b] == eos)
                done[b] = true;
            else
                decoded[b].push_back(previous[b]);
            all_done = all_done && done[b];
        }
        if (all_done) break;
    }
    return decoded;
}

std::vector<Param> Seq2Seq::params() {
    std::vector<Param> p = net_.params();
    p.push_back({"output/weights", &w_, &dw_});
    p.push_back({"output/bias", &b_, &db_});
    return p;
}

double exact_match(const std::vector<std::vector<int64_t>> &decoded, const std::vector<std::vector<int64_t>> &expected) {
    if (decoded.size() != expected.size() || expected.empty()) fail("exact_match: ", decoded.size(), " vs ", expected.size());
    int64_t hits = 0;
    for (size_t i = 0; i < decoded.size(); i++) {
        std::vector<int64_t> want(expected[i].begin(), expected[i].end());
        if (!want.empty()) want.pop_back();  // the EOS
        hits += decoded[i] == want;
    }
    return static_cast<double>(hits) / static_cast<double>(decoded.size());
}

double transduction_accuracy(const TransductionTask &task, Seq2Seq &model, uint32_t seed, int64_t eval_size,
                             const std::function<bool()> &stop, int64_t *evaluated) {
    constexpr int64_t kEvalBatch = 64;
    double hits = 0;
    int64_t done = 0;
    for (int64_t index = 0; done < eval_size && !(done > 0 && stop && stop()); index++) {
        const int64_t n = std::min(kEvalBatch, eval_size - done);
        Seq2SeqBatch b = transduction_batch(task, n, seed, 1, static_cast<uint64_t>(index));
        auto decoded = model.greedy_decode(b.source, b.lengths, task.bos(), task.eos(), task.max_len + 1);
        hits += exact_match(decoded, b.targets) * static_cast<double>(n);
        done += n;
    }
    if (evaluated) *evaluated = done;
    return hits / static_cast<double>(done);
}

}  // namespace qrnn::nn
