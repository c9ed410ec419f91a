// Sweeps of synthetic-task training runs (train.task reverse | sort | classify): rows with accuracies and
// curves, resumable, reported per setting; bad keys named with their line before anything runs.
#include <gtest/gtest.h>

#include <sstream>

#include "sweep/results_file.h"
#include "tests/support/cli.h"

using namespace qrnn;
using namespace qrnn::test;

namespace {

std::string tiny_reverse_sweep(const std::string &name) {
    return write_scratch(name, "name: reverse_test\nbase:\n  model: encdec\n  pooling: fo\n  window: 2\n  input: 8\n"
                               "  hidden: 8\n  layers: 1\n  batch: 4\n  train.task: reverse\n  train.min_len: 1\n"
                               "  train.max_len: 3\n  train.vocab: 3\n  train.epochs: 2\n  train.max_batches: 3\n"
                               "  train.eval_size: 8\n  train.target_accuracy: 1\n"
                               "grid:\n  seed: [1, 2]\n  train.attention: [on, off]\n");
}

std::vector<double> curve(const std::string &text) {
    std::vector<double> v;
    std::istringstream in(text);
    for (std::string item; std::getline(in, item, ',');) v.push_back(std::stod(item));
    return v;
}

}  // namespace

TEST(SeqTaskSweeps, RowsHoldAccuraciesAndCurvesAndTheReportAveragesSeeds) {
    const std::string yaml = tiny_reverse_sweep("reverse_sweep.yaml"), out = scratch_path("reverse_sweep.h5");
    CliResult first = run_cli("sweep " + yaml + " -o " + out);
    ASSERT_EQ(first.exit_code, 0) << first.output;
    EXPECT_NE(first.output.find("4 to run"), std::string::npos) << first.output;
    // Each run's progress line reports its accuracy, not a step time (training runs have none).
    EXPECT_NE(first.output.find(": ok best exact_match "), std::string::npos) << first.output;
    EXPECT_EQ(first.output.find("nan"), std::string::npos) << first.output;
    expect_cli("sweep " + yaml + " -o " + out, 0, "4 already in");
    const sweep::ResultTable rows = sweep::read_results(out);
    ASSERT_EQ(rows.rows(), 4u);
    std::map<std::string, std::vector<double>> best;  // per attention setting, over the seeds
    std::map<std::string, std::string> losses;
    for (size_t i = 0; i < rows.rows(); i++) {
        SCOPED_TRACE(i);
        EXPECT_EQ(rows.str(i, "status"), "ok") << rows.str(i, "error");
        EXPECT_EQ(rows.str(i, "task"), "reverse");
        EXPECT_EQ(rows.str(i, "metric"), "exact_match");
        const std::string attention = rows.str(i, "attention");
        EXPECT_NE(rows.str(i, "train").find("attention=" + attention), std::string::npos) << rows.str(i, "train");
        EXPECT_EQ(rows.num(i, "steps"), 6);
        EXPECT_EQ(rows.num(i, "epochs_done"), 2);
        const std::vector<double> accuracy = curve(rows.str(i, "accuracy_curve")), loss = curve(rows.str(i, "train_loss_curve"));
        ASSERT_EQ(accuracy.size(), 2u);
        ASSERT_EQ(loss.size(), 2u);
        EXPECT_EQ(rows.num(i, "best_accuracy"), std::max(accuracy[0], accuracy[1]));
        EXPECT_EQ(rows.num(i, "final_accuracy"), accuracy[1]);
        EXPECT_GT(loss[0], 0);
        EXPECT_GT(rows.num(i, "train_seconds"), 0);
        best[attention].push_back(rows.num(i, "best_accuracy"));
        losses[attention + rows.str(i, "seed")] = rows.str(i, "train_loss_curve");
    }
    ASSERT_EQ(best["on"].size(), 2u);
    ASSERT_EQ(best["off"].size(), 2u);
    EXPECT_NE(losses["on1"], losses["on2"]) << "the seeds should give different runs";
    EXPECT_NE(losses["on1"], losses["off1"]) << "attention on and off should be different models";

    CliResult r = run_cli("report " + out);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    for (const char *want : {"synthetic-task training runs", "per setting", "held-out accuracy per epoch",
                             "encdec train.attention=on valid", "encdec train.attention=off valid"})
        EXPECT_NE(r.output.find(want), std::string::npos) << want << "\n" << r.output;
    EXPECT_EQ(r.output.find("best_val_ppl"), std::string::npos) << "no language-model table for task runs\n" << r.output;
}

// Per setting, the report's mean is the mean of the seeds' best accuracies (classify: near chance, never all 0).
TEST(SeqTaskSweeps, TheReportAveragesEachSettingsSeeds) {
    const std::string yaml = write_scratch("classify_sweep.yaml",
                                           "name: classify_test\nbase:\n  model: qrnn-dense\n  pooling: fo\n  window: 2\n"
                                           "  input: 8\n  hidden: 8\n  layers: 2\n  batch: 8\n  train.task: classify\n"
                                           "  train.max_len: 8\n  train.epochs: 1\n  train.max_batches: 3\n  train.eval_size: 64\n"
                                           "grid:\n  seed: [1, 2, 3]\n  hidden: [8, 12]\n");
    const std::string out = scratch_path("classify_sweep.h5");
    expect_cli("sweep " + yaml + " -o " + out, 0, "6 to run");
    const sweep::ResultTable rows = sweep::read_results(out);
    ASSERT_EQ(rows.rows(), 6u);
    std::vector<double> best12;
    for (size_t i = 0; i < rows.rows(); i++) {
        EXPECT_EQ(rows.str(i, "metric"), "accuracy") << i;
        EXPECT_EQ(rows.num(i, "chance"), 0.5) << i;
        EXPECT_EQ(rows.str(i, "attention"), "-") << i;
        if (rows.str(i, "hidden") == "12") best12.push_back(rows.num(i, "best_accuracy"));
    }
    ASSERT_EQ(best12.size(), 3u);
    const double mean12 = (best12[0] + best12[1] + best12[2]) / 3;
    ASSERT_GT(mean12, 0);
    CliResult r = run_cli("report " + out);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::istringstream lines(r.output);
    std::string line, setting12;
    while (std::getline(lines, line))
        if (line.find("hidden=12") != std::string::npos && line.find(" 1,2,3 ") != std::string::npos) setting12 = line;
    char mean[32];
    std::snprintf(mean, sizeof mean, " %.4f ", mean12);
    EXPECT_NE(setting12.find(mean), std::string::npos) << mean << "\n" << r.output;
}

TEST(SeqTaskSweeps, BadTaskKeysAreNamedWithTheirLineBeforeAnythingRuns) {
    const std::string unknown = write_scratch("unknown_task.yaml", "name: x\nbase:\n  model: encdec\n  train.task: translate\n");
    expect_cli("sweep " + unknown + " --dry-run", 2, "value 'translate': must be one of lm, reverse, sort, classify");
    const std::string wrong_model =
        write_scratch("wrong_model.yaml", "name: x\nbase:\n  train.task: reverse\n  model: qrnn\n  train.epochs: 1\n");
    expect_cli("sweep " + wrong_model + " --dry-run", 2, "wrong_model.yaml:4");
    expect_cli("sweep " + wrong_model + " --dry-run", 2, "key 'model': task reverse trains an encoder-decoder");
    const std::string no_attention = write_scratch(
        "no_attention.yaml", "name: x\nbase:\n  model: encdec-noattn\n  train.task: sort\n  train.epochs: 1\n  train.attention: on\n");
    expect_cli("sweep " + no_attention + " --dry-run", 2, "no_attention.yaml:6");
    expect_cli("sweep " + no_attention + " --dry-run", 2, "key 'attention': model 'encdec-noattn' has no attention");
    const std::string data = write_scratch("task_data.yaml", "name: x\nbase:\n  model: qrnn\n  train.task: classify\n  train.train: a.txt\n");
    expect_cli("sweep " + data + " --dry-run", 2, "key 'train': task classify generates its own data");
}
