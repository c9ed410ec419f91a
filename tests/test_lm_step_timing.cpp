// qrnn train-speed (lm/step_timing.h) and its report: a tiny Fig. 4 left run (the experiment file itself, shrunk
// by options) writes a results file that reads back and that `qrnn report` draws beside the paper's bars; bad
// input is one line naming the key or file. Also the LM's dropout against its definition. Timing decides nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "core/hash_rng.h"
#include "core/streams.h"
#include "lm/language_model.h"
#include "nn/dropout.h"
#include "lm/step_timing.h"
#include "tests/support/cli.h"

using namespace qrnn;
using namespace qrnn::test;

namespace {

const std::string kSource = QRNN_SOURCE_DIR;
const std::string kExperiment = kSource + "/experiments/paper_fig4_left.yaml";
// The experiment at a size that runs in seconds (every model of the file, the real data, vocabulary 10,000).
const std::string kTiny = " --emb 16 --hidden 16 --batch 4 --bptt 10 --warmup 1 --batches 2 --train " + kSource +
                          "/data/ptb/ptb.valid.txt";

std::string file_text(const std::string &path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST(Dropout, MatchesTheHashDefinitionInPlaceAndInto) {
    const uint32_t seed = 7, stream = 3;
    const double p = 0.3;
    for (int64_t C : {1, 7, 17, 33, 640}) {
        Tensor<float> x({3, 2, C});
        for (size_t i = 0; i < x.size(); i++) x.data[i] = 0.5f + static_cast<float>(i % 13);
        Tensor<float> in_place = x, into;
        nn::apply_dropout(in_place, p, seed, stream, 11);
        nn::dropout_into(x, into, p, seed, stream, 11);
        ASSERT_EQ(into.shape, x.shape);
        // The definition (docs/training.md): kept iff hash_at(key, time + t, b, c) >= threshold, scaled 1/(1-p).
        const uint32_t key = stream_key(seed, streams::nn_dropout(stream)), threshold = drop_threshold(p);
        int kept = 0;
        for (int64_t t = 0; t < 3; t++)
            for (int64_t b = 0; b < 2; b++)
                for (int64_t c = 0; c < C; c++) {
                    const bool keep = hash_at<uint32_t>(key, static_cast<uint32_t>(11 + t), static_cast<uint32_t>(b),
                                                        static_cast<uint32_t>(c)) >= threshold;
                    const float want = keep ? x(t, b, c) * static_cast<float>(1.0 / (1.0 - p)) : 0.0f;
                    ASSERT_EQ(into(t, b, c), want) << "C=" << C << " t=" << t << " b=" << b << " c=" << c;
                    ASSERT_EQ(in_place(t, b, c), want);
                    kept += keep;
                }
        if (C == 640) EXPECT_NEAR(kept / (6.0 * C), 0.7, 0.05);
    }
    Tensor<float> x({2, 1, 5}), out;
    x.data = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    nn::dropout_into(x, out, 0.0, 1, 0, 0);  // rate 0: a copy
    EXPECT_EQ(out.data, x.data);
}

TEST(PaperFig4Left, TheCopiedCsvReads) {
    const auto bars = lm::read_paper_fig4_left(lm::default_paper_fig4_left_csv());
    ASSERT_EQ(bars.size(), 3u);
    EXPECT_EQ(bars[2].model, "QRNN");
    EXPECT_DOUBLE_EQ(bars[2].total_ms, 150);
    EXPECT_DOUBLE_EQ(bars[1].rnn_ms + bars[1].softmax_ms + bars[1].optim_ms, bars[1].total_ms);
    EXPECT_EQ(lm::paper_counterpart("lstm-onednn"), "LSTM (cuDNN)");
}

TEST(TrainSpeed, TinyFig4RunWritesResultsThatTheReportDraws) {
    const std::string results = scratch_path("fig4/tiny.h5");
    CliResult r = run_cli("train-speed " + kExperiment + kTiny + " --results " + results);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("vocabulary 10000 (6022 from the file, padded)"), std::string::npos) << r.output;

    const lm::StepTimings t = lm::read_step_timings(results);
    ASSERT_EQ(t.models.size(), 3u);
    EXPECT_EQ(t.models[0].model, "qrnn");
    EXPECT_EQ(t.models[2].model, "lstm-halide");
    EXPECT_EQ(std::get<int64_t>(t.attrs.at("vocab")), 10000);
    EXPECT_EQ(std::get<int64_t>(t.attrs.at("vocab_file")), 6022);
    for (auto &m : t.models) {
        ASSERT_EQ(m.total_ms.size(), 2u) << m.model;
        EXPECT_GT(m.parameters, 2 * 10000 * 16) << m.model;  // embedding and decoder over the padded vocabulary
        for (size_t i = 0; i < 2; i++) {
            EXPECT_GT(m.rnn_ms[i], 0);
            EXPECT_GT(m.softmax_ms[i], 0);
            EXPECT_GT(m.optim_ms[i], 0);
            EXPECT_NEAR(m.rnn_ms[i] + m.softmax_ms[i] + m.optim_ms[i] + m.other_ms[i], m.total_ms[i], 1e-9);
        }
    }

    CliResult report = run_cli("report " + results);
    ASSERT_EQ(report.exit_code, 0) << report.output;
    for (const char *want : {"per-batch time, ms", "stacked bars", "ours (CPU, ms):", "  qrnn         |",
                             "paper (Bradbury et al. 2016, Fig. 4 left; GPU, ms):", "  QRNN         |rrrrr",
                             "LSTM (cuDNN)", "ratios to the QRNN", "4.25x", "targets: qrnn rnn", "batch 4 x bptt 10"})
        EXPECT_NE(report.output.find(want), std::string::npos) << "missing '" << want << "' in:\n" << report.output;
    // Without the paper's file: our bars only.
    CliResult ours = run_cli("report " + results + " --paper-fig4-left ''");
    ASSERT_EQ(ours.exit_code, 0) << ours.output;
    EXPECT_EQ(ours.output.find("paper (Bradbury"), std::string::npos);
    EXPECT_NE(ours.output.find("ours (CPU, ms):"), std::string::npos);
}

// `models` entries NAME@PRECISION: the QRNN in bf16 beside itself in f32 in one run (Fig. 4 left in bf16), its own
// row with a paired ratio to the f32 QRNN; a precision a model does not train in, or none at all, is an error.
TEST(TrainSpeed, TimesTheQrnnInBf16BesideF32) {
    const std::string results = scratch_path("fig4/bf16.h5");
    CliResult r = run_cli("train-speed " + kExperiment + kTiny + " --models qrnn,qrnn@bf16 --results " + results);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(std::regex_search(r.output, std::regex("model qrnn: 2 x 16, embedding 16, \\d+ parameters, precision f32\n")))
        << r.output;
    EXPECT_TRUE(std::regex_search(r.output, std::regex("model qrnn@bf16: 2 x 16, embedding 16, \\d+ parameters, precision bf16\n")))
        << r.output;
    const lm::StepTimings t = lm::read_step_timings(results);
    ASSERT_EQ(t.models.size(), 2u);
    EXPECT_EQ(t.models[1].model, "qrnn@bf16");
    EXPECT_EQ(t.models[1].parameters, t.models[0].parameters);
    CliResult report = run_cli("report " + results);
    ASSERT_EQ(report.exit_code, 0) << report.output;
    EXPECT_NE(report.output.find("  qrnn@bf16"), std::string::npos) << report.output;
    const std::string base = "train-speed " + kExperiment + kTiny + " --models ";
    expect_cli(base + "qrnn,qrnn@fp8", 2, "key 'models': 'qrnn@fp8': precision 'fp8': must be one of f32, bf16");
}

// oneDNN's LSTM trains in bf16 where oneDNN has a real bf16 kernel (avx512_bf16). Elsewhere it has only its reference
// implementation, whose time would flatter the QRNN: the entry is skipped, naming why, and the others are timed.
// QRNN_ONEDNN_BF16_ANY_IMPL=1 times it anyway (for tests, never for figures).
TEST(TrainSpeed, TimesOnednnsBf16LstmOrSkipsItNamingWhy) {
    const std::string run = "train-speed " + kExperiment + kTiny + " --models qrnn,qrnn@bf16,lstm-onednn@bf16";
    CliResult here = run_cli(run);
    ASSERT_EQ(here.exit_code, 0) << here.output;
    const bool skipped = here.output.find("skipped: lstm-onednn@bf16: model 'lstm-onednn' unavailable: oneDNN has only "
                                          "its reference bf16 LSTM") != std::string::npos;
    EXPECT_EQ(here.output.find("model lstm-onednn@bf16: 2 x 16") == std::string::npos, skipped) << here.output;
    setenv("QRNN_ONEDNN_BF16_ANY_IMPL", "1", 1);
    const std::string results = scratch_path("fig4/onednn_bf16.h5");
    CliResult any = run_cli(run + " --results " + results);
    unsetenv("QRNN_ONEDNN_BF16_ANY_IMPL");
    ASSERT_EQ(any.exit_code, 0) << any.output;
    EXPECT_TRUE(std::regex_search(any.output, std::regex("model lstm-onednn@bf16: 2 x 16, embedding 16, \\d+ parameters, precision bf16\n")))
        << any.output;
    // The report sets the bf16 LSTM against the bf16 QRNN of the same run, besides against the f32 QRNN.
    CliResult report = run_cli("report " + results);
    ASSERT_EQ(report.exit_code, 0) << report.output;
    EXPECT_TRUE(std::regex_search(report.output, std::regex("lstm-onednn@bf16 / qrnn@bf16 \\(same run, same precision\\): step "
                                                            "[0-9.]+x, paired [0-9.]+x; rnn paired [0-9.]+x\n")))
        << report.output;
}

TEST(TrainSpeed, BadInputIsOneLineNamingKeyOrFile) {
    const std::string valid = kSource + "/data/ptb/ptb.valid.txt";
    const std::string base = "train-speed --train " + valid + " --emb 8 --hidden 8 --batch 2";
    expect_cli(base + " --models ''", 2, "--models: key 'models': value '': empty model name in the list");
    expect_cli(base + " --models qrnn,qrnn", 2, "key 'models': model 'qrnn' listed twice");
    expect_cli(base + " --models qrnn,gru", 2, "model 'gru'");
    expect_cli(base + " --models qrnn --batches 0", 2, "--batches: key 'batches': value '0': must be >= 1");
    expect_cli(base + " --models qrnn --vocab 100", 2, "key 'vocab': value '100': below the 6022 words of " + valid);
    expect_cli("train-speed --train " + valid + " --batch 2 --models qrnn --bptt 100000", 2, "73760 tokens give no batch of 2 x 100000 steps");
    expect_cli("train-speed --models qrnn", 2, "key 'train': no training file");
    const std::string with_model = write_scratch("model.yaml", "models: [qrnn]\nmodel: qrnn\n");
    expect_cli("train-speed " + with_model, 2, with_model + ":2: key 'model': value 'qrnn': give the models to time as 'models'");
    const std::string with_list = write_scratch("list.yaml", "models: [qrnn]\nhidden: [8, 16]\n");
    expect_cli("train-speed " + with_list, 2, with_list + ":2: key 'hidden': value must be a single value");
    expect_cli("train-speed " + kSource + "/no/such.yaml", 2, "no/such.yaml: cannot read step-timing config");

    // A failing run leaves an existing results file as it was.
    const std::string results = write_scratch("kept.h5", "not touched");
    expect_cli(base + " --models qrnn,gru --results " + results, 2, "model 'gru'");
    EXPECT_EQ(file_text(results), "not touched");

    // The report: a malformed paper file is named with its line.
    const std::string bad_csv = write_scratch("bad.csv", "# c\nmodel,rnn,softmax,optimization,total\nQRNN,40,fast,35,150\n");
    const std::string tiny = scratch_path("fig4/bad_paper.h5");
    ASSERT_EQ(run_cli(base + " --models lstm-onednn --warmup 0 --batches 1 --results " + tiny).exit_code, 0);
    expect_cli("report " + tiny + " --paper-fig4-left " + bad_csv, 2, bad_csv + ":3: softmax 'fast' is not a time in ms");
    const std::string other = write_scratch("other.csv", "a,b\n1,2\n");
    expect_cli("report " + tiny + " --paper-fig4-left " + other, 2, other + ":1: expected the header");
}
