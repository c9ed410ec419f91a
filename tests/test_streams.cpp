// core/streams.h: every hash stream has one use, and no two parameters of any trainable model draw correlated
// values (the language model's embedding once drew from QRNN layer 0's weight stream: correlation 1.0).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "core/streams.h"
#include "lm/language_model.h"
#include "tasks/seq_classifier.h"
#include "nn/seq2seq.h"
#include "nn/seq_tasks.h"
#include "runtime/encdec_config.h"
#include "tests/support/lm_problem.h"

using namespace qrnn;

namespace {

TEST(Streams, EveryStreamOfTheTableHasOneUse) {
    std::map<uint32_t, std::string> owner;
    auto claim = [&](uint32_t stream, const std::string &use) {
        auto [at, fresh] = owner.emplace(stream, use);
        EXPECT_TRUE(fresh) << "stream " << std::hex << stream << ": " << use << " and " << at->second;
    };
    using namespace streams;
    for (uint32_t l = 0; l < kMaxStreamLayers; l++) {
        const std::string layer = " of layer " + std::to_string(l);
        claim(qrnn_dropout(l), "QRNN dropout" + layer), claim(qrnn_zoneout(l), "QRNN zoneout" + layer);
        claim(qrnn_weights(l), "QRNN weights" + layer), claim(qrnn_bias(l), "QRNN bias" + layer);
        claim(lstm_w_input(l), "LSTM w_input" + layer), claim(lstm_w_recurrent(l), "LSTM w_recurrent" + layer);
        claim(lstm_bias(l), "LSTM bias" + layer);
        claim(cnn_weights(l), "CNN weights" + layer), claim(cnn_bias(l), "CNN bias" + layer);
        claim(condition(l), "conditioning" + layer);
        claim(nn_dropout(2 + l), "nn dropout" + layer);
    }
    for (uint32_t split = 0; split < 2; split++)
        claim(transduction_data(split), "transduction data"), claim(counting_data(split), "counting data");
    for (uint32_t i = 0; i < 4; i++) claim(kEncDecBenchInputs + i, "encoder-decoder bench input");
    const std::vector<std::pair<uint32_t, std::string>> singles{
        {kBenchInput, "bench x"},          {kBenchOutputGrad, "bench dy"},     {kSeqLengths, "lengths"},
        {kInt8Calibration, "int8 calibration x"},
        {kLstmBenchH0, "LSTM h0"},         {kLstmBenchC0, "LSTM c0"},          {kAttention, "attention"},
        {kSeq2SeqOutput, "seq2seq output"}, {kClassifierEmbedding, "cls emb"}, {kClassifierOutput, "cls output"},
        {kLmEmbedding, "LM embedding"},     {kLmDecoder, "LM decoder"},         {kBenchTrainingX, "training x"},
        {kBenchTrainingDy, "training dy"},  {nn_dropout(0), "io dropout 0"},   {nn_dropout(1), "io dropout 1"}};
    for (auto &[stream, use] : singles) claim(stream, use);
}

// Pearson correlation of the first min(|a|, |b|) values.
double correlation(const Tensor<float> &a, const Tensor<float> &b) {
    const size_t n = std::min(a.size(), b.size());
    double ma = 0, mb = 0;
    for (size_t i = 0; i < n; i++) ma += a.data[i], mb += b.data[i];
    ma /= n, mb /= n;
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < n; i++) {
        const double x = a.data[i] - ma, y = b.data[i] - mb;
        ab += x * y, aa += x * x, bb += y * y;
    }
    return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0.0;
}

// No two randomly initialised parameters correlate beyond what chance gives over their shared prefix (>= 30 values:
// |r| < 0.6; identical streams give 1.0).
void expect_independent(const std::vector<nn::Param> &params, const std::string &model) {
    for (size_t i = 0; i < params.size(); i++)
        for (size_t j = i + 1; j < params.size(); j++) {
            if (std::min(params[i].value->size(), params[j].value->size()) < 30) continue;
            EXPECT_LT(std::abs(correlation(*params[i].value, *params[j].value)), 0.6)
                << model << ": " << params[i].name << " and " << params[j].name;
        }
}

TEST(Streams, LanguageModelParametersAreIndependent) {
    for (const char *model : {"qrnn", "lstm-onednn", "lstm-halide", "cnn"}) {
        lm::LmShape shape = test::small_lm(model);
        shape.vocab = 40, shape.stack.input = 8, shape.stack.hidden = 8;
        lm::LanguageModel lm(shape, test::small_run());
        expect_independent(lm.params(), model);
    }
}

TEST(Streams, ClassifierAndEncoderDecoderParametersAreIndependent) {
    lm::ClassifierShape shape;
    shape.stack = test::small_lm("qrnn").stack;
    shape.stack.input = 8, shape.stack.hidden = 8, shape.vocab = 40, shape.classes = 4;
    lm::SequenceClassifier classifier(shape, test::small_run());
    expect_independent(classifier.params(), "classifier");

    nn::TransductionTask task;
    task.vocab = 6, task.min_len = 2, task.max_len = 5;
    ModelConfig base;
    base.hidden = 8, base.layers = 2, base.window = 2, base.pooling = "fo", base.input = task.symbols(), base.seed = 3;
    nn::Seq2Seq seq2seq(make_encdec_config(base, task.max_len, task.symbols(), true), task.symbols());
    expect_independent(seq2seq.params(), "encoder-decoder");
}

}  // namespace
