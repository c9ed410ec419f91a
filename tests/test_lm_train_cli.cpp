// qrnn train / qrnn eval end to end: a run killed with SIGKILL mid-epoch and resumed by the same command ends
// with parameters bit-identical to an uninterrupted run; bad input is a one-line error naming file/key/value.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "lm/trainer.h"
#include "tests/support/cli.h"

using namespace qrnn;
using namespace qrnn::test;

namespace {

// The first `lines` lines of PTB's validation split from line `first`: a small real corpus.
std::string ptb_slice(const std::string &name, int first, int lines) {
    std::ifstream in(std::string(QRNN_SOURCE_DIR) + "/data/ptb/ptb.valid.txt");
    std::string line, text;
    for (int i = 0; std::getline(in, line) && i < first + lines; i++)
        if (i >= first) text += line + "\n";
    return write_scratch(name, text);
}

// A run of 2 x 40 steps long enough (~10 ms a step) to be killed in the middle.
std::string train_args(const std::string &checkpoint, const std::string &model = "qrnn") {
    static const std::string train = ptb_slice("train.txt", 0, 400), valid = ptb_slice("valid.txt", 400, 60);
    return "train --model " + model + " --train " + train + " --valid " + valid +
           " --emb 96 --hidden 96 --layers 2 --batch 8 --bptt 20 --epochs 2 --zoneout 0.1 --dropout 0.1 --io_dropout 0.2"
           " --lr 5 --max_batches 40 --checkpoint_every 7 --log_seconds 1000 --checkpoint " + checkpoint;
}

// Every parameter of a checkpoint, in the model's order.
std::vector<std::vector<float>> checkpoint_params(const std::string &path) {
    lm::CheckpointInfo info = lm::read_checkpoint_info(path);
    lm::TrainConfig cfg = lm::config_from_text(info.config, path);
    auto model = lm::make_language_model(cfg, static_cast<int64_t>(info.vocab.size()));
    model->reset_state(cfg.batch, 0);
    lm::load_checkpoint_model(path, *model);
    std::vector<std::vector<float>> all;
    for (auto &p : model->params()) all.push_back(p.value->data);
    return all;
}

}  // namespace

TEST(TrainCli, KilledMidEpochThenResumedIsBitIdentical) {
    const std::string whole = scratch_path("whole.h5"), killed = scratch_path("killed.h5");
    CliResult a = run_cli(train_args(whole));
    ASSERT_EQ(a.exit_code, 0) << a.output;
    const int64_t total_steps = lm::read_checkpoint_info(whole).progress.step;
    ASSERT_EQ(total_steps, 80);

    // The same run, killed (SIGKILL) once a checkpoint well into the first epoch exists.
    const pid_t pid = fork();
    if (pid == 0) {
        const std::string cmd = std::string("exec ") + QRNN_CLI + " " + train_args(killed) + " >/dev/null 2>&1";
        execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char *>(nullptr));
        _exit(127);
    }
    int64_t step_at_kill = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
    while (std::chrono::steady_clock::now() < deadline) {
        if (std::filesystem::exists(killed)) {
            step_at_kill = lm::read_checkpoint_info(killed).progress.step;
            if (step_at_kill >= 14) break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the run ended before it was killed";
    const lm::CheckpointInfo at_kill = lm::read_checkpoint_info(killed);
    ASSERT_EQ(at_kill.progress.epoch, 0);
    ASSERT_GT(at_kill.progress.batch, 0);  // mid-epoch
    ASSERT_LT(at_kill.progress.step, total_steps);

    CliResult b = run_cli(train_args(killed));
    ASSERT_EQ(b.exit_code, 0) << b.output;
    EXPECT_NE(b.output.find("resuming from " + killed), std::string::npos) << b.output;
    EXPECT_EQ(lm::read_checkpoint_info(killed).progress.step, total_steps);
    const auto pa = checkpoint_params(whole), pb = checkpoint_params(killed);
    ASSERT_EQ(pa.size(), pb.size());
    for (size_t i = 0; i < pa.size(); i++) EXPECT_TRUE(pa[i] == pb[i]) << "parameter " << i << " differs";

    // Another configuration on that checkpoint is refused.
    std::string other = train_args(killed);
    other.replace(other.find("--hidden 96"), 11, "--hidden 97");
    expect_cli(other, 2, "checkpoint of another configuration (key 'hidden' is '96' there, '97' here)");
}

// Resuming a finished run trains nothing; eval reads a checkpoint; report prints the results file (an LSTM
// run: the LM is model-independent, and it needs no JIT compilation).
TEST(TrainCli, ResumeFinishedEvalAndReport) {
    const std::string ckpt = scratch_path("lstm.h5"), results = scratch_path("lstm_results.h5");
    const std::string args = train_args(ckpt, "lstm-onednn") + " --results " + results;
    expect_cli(args, 0, "best validation perplexity");
    CliResult again = run_cli(args);
    EXPECT_EQ(again.exit_code, 0) << again.output;
    EXPECT_NE(again.output.find("resuming from " + ckpt + ": epoch 3, batch 0, step 80"), std::string::npos) << again.output;
    EXPECT_EQ(again.output.find("epoch 2/2"), std::string::npos) << again.output;  // no training step
    CliResult e = run_cli("eval " + ckpt + " --data " + ptb_slice("test.txt", 500, 40));
    EXPECT_EQ(e.exit_code, 0) << e.output;
    EXPECT_NE(e.output.find("test.txt: perplexity "), std::string::npos) << e.output;
    CliResult r = run_cli("report " + results + " " + results);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("best_val_ppl"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("learning curves"), std::string::npos) << r.output;
}

TEST(TrainCli, BadInputNamesFileKeyAndValue) {
    const std::string good = ptb_slice("good.txt", 0, 50);
    const std::string yaml = write_scratch("bad.yaml", "hidden: 32\nlr: fast\n");
    expect_cli("train " + yaml, 2, yaml + ":2: key 'lr': value 'fast': not a finite number");
    const std::string unknown = write_scratch("unknown.yaml", "hiden: 32\n");
    expect_cli("train " + unknown, 2, unknown + ":1: unknown key 'hiden' (known: model,");
    expect_cli("train --train " + good + " --valid " + good + " --hidden 0", 2, "--hidden: key 'hidden': value '0': must be >= 1");
    const std::string empty = write_scratch("empty.txt", "");
    expect_cli("train --train " + empty + " --valid " + good, 2, empty + ": token file holds no words");
    expect_cli("train --train " + good, 2, "key 'valid': no validation file");
    expect_cli("train --train " + good + " --valid /nonexistent.txt --epochs 1", 2, "/nonexistent.txt: cannot read token file");
    expect_cli("train --train " + good + " --valid " + good + " --model lstm-cudnn", 2, "lstm-cudnn");
    expect_cli("train --data /nonexistent", 2, "--data /nonexistent: not a directory");
    expect_cli("eval /nonexistent.h5 --data " + good, 2, "/nonexistent.h5");
    expect_cli("eval " + good + " --data " + good, 2, good);
}

TEST(TrainCli, SweepOfTrainingRunsIsResumableAndReported) {
    const std::string train = ptb_slice("sweep_train.txt", 0, 100), valid = ptb_slice("sweep_valid.txt", 100, 30);
    const std::string yaml = write_scratch("lm_sweep.yaml", "name: lm_test\nbase:\n  model: lstm-onednn\n  input: 16\n  layers: 1\n"
                                                            "  batch: 4\n  seq: 10\n  train.epochs: 2\n  train.max_batches: 5\n"
                                                            "  train.train: " + train + "\n  train.valid: " + valid +
                                                            "\ngrid:\n  hidden: [8, 16]\n");
    const std::string out = scratch_path("lm_sweep.h5");
    expect_cli("sweep " + yaml + " -o " + out, 0, "2 to run");
    expect_cli("sweep " + yaml + " -o " + out, 0, "2 already in");
    CliResult r = run_cli("report " + out);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    for (const char *want : {"training runs", "best_val_ppl", "learning curves", "lstm-onednn/16/z0 valid"})
        EXPECT_NE(r.output.find(want), std::string::npos) << want << "\n" << r.output;
    const std::string bad = write_scratch("bad_sweep.yaml", "name: x\nbase:\n  train.lrr: 3\n");
    expect_cli("sweep " + bad + " --dry-run", 2, "train.lrr");
    const std::string bad_value = write_scratch("bad_value.yaml", "name: x\nbase:\n  train.lr: fast\n");
    expect_cli("sweep " + bad_value + " --dry-run", 2, "value 'fast': not a finite number");
}
