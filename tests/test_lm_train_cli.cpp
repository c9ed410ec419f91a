// qrnn train / qrnn eval end to end: a run killed with SIGKILL mid-epoch and resumed by the same command ends
// with parameters bit-identical to an uninterrupted run (also inside a sweep); test perplexity uses the best
// validation epoch's parameters; bad input is a one-line error naming file/key/value.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/h5io.h"
#include "lm/trainer.h"
#include "runtime/writer_lock.h"
#include "sweep/results_file.h"
#include "tests/support/cli.h"

using namespace qrnn;
using namespace qrnn::test;

namespace {

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
    for (auto &p : model->params()) all.emplace_back(p.value->data.begin(), p.value->data.end());
    return all;
}

// Starts `qrnn <args>` and kills it (SIGKILL) once `checkpoint` holds step >= min_step of the first epoch;
// returns that checkpoint's progress.
lm::TrainProgress kill_when_checkpointed(const std::string &args, const std::string &checkpoint, int64_t min_step) {
    kill_cli_when(args, [&] {
        return std::filesystem::exists(checkpoint) && lm::read_checkpoint_info(checkpoint).progress.step >= min_step;
    });
    return lm::read_checkpoint_info(checkpoint).progress;
}

void expect_same_params(const std::string &a, const std::string &b) {
    const auto pa = checkpoint_params(a), pb = checkpoint_params(b);
    ASSERT_EQ(pa.size(), pb.size());
    for (size_t i = 0; i < pa.size(); i++) EXPECT_TRUE(pa[i] == pb[i]) << "parameter " << i << " differs";
}

}  // namespace

TEST(TrainCli, KilledMidEpochThenResumedIsBitIdentical) {
    const std::string whole = scratch_path("whole.h5"), killed = scratch_path("killed.h5");
    CliResult a = run_cli(train_args(whole));
    ASSERT_EQ(a.exit_code, 0) << a.output;
    const int64_t total_steps = lm::read_checkpoint_info(whole).progress.step;
    ASSERT_EQ(total_steps, 80);

    // The same run, killed (SIGKILL) once a checkpoint well into the first epoch exists.
    const lm::TrainProgress at_kill = kill_when_checkpointed(train_args(killed), killed, 14);
    ASSERT_EQ(at_kill.epoch, 0);
    ASSERT_GT(at_kill.batch, 0);  // mid-epoch
    ASSERT_LT(at_kill.step, total_steps);

    CliResult b = run_cli(train_args(killed));
    ASSERT_EQ(b.exit_code, 0) << b.output;
    EXPECT_NE(b.output.find("resuming from " + killed), std::string::npos) << b.output;
    EXPECT_EQ(lm::read_checkpoint_info(killed).progress.step, total_steps);
    expect_same_params(whole, killed);

    // Another configuration on that checkpoint is refused.
    std::string other = train_args(killed);
    other.replace(other.find("--hidden 96"), 11, "--hidden 97");
    expect_cli(other, 2, "checkpoint of another configuration (key 'hidden' is '96' there, '97' here)");
}

// --save_initial writes the parameters before the first update as a step-0 checkpoint; naming it as --checkpoint
// starts the same run from them (bit-identical to the run that wrote it); --step_log has a line per step; a
// checkpoint of the old training convention (format_version 1) is refused for resuming and still evaluated.
TEST(TrainCli, InitialModelStepLogAndOldConvention) {
    const std::string first = scratch_path("first.h5"), initial = scratch_path("initial.h5"), again = scratch_path("again.h5");
    const std::string log = scratch_path("steps.csv");
    auto args = [](const std::string &checkpoint) {
        std::string a = train_args(checkpoint, "lstm-onednn");
        a.replace(a.find("--epochs 2"), 10, "--epochs 1");
        a.replace(a.find("--max_batches 40"), 16, "--max_batches 6");
        return a;
    };
    CliResult a = run_cli(args(first) + " --save_initial " + initial + " --step_log " + log);
    ASSERT_EQ(a.exit_code, 0) << a.output;
    EXPECT_EQ(lm::read_checkpoint_info(initial).progress.step, 0);
    EXPECT_NE(checkpoint_params(initial), checkpoint_params(first));

    std::ifstream csv(log);
    std::vector<std::string> lines;
    for (std::string line; std::getline(csv, line);) lines.push_back(line);
    ASSERT_EQ(lines.size(), 7u);
    EXPECT_EQ(lines[0], "step,epoch,batch,loss,grad_norm,lr");
    EXPECT_EQ(lines[6].substr(0, 6), "6,1,6,");

    std::filesystem::copy_file(initial, again);
    CliResult b = run_cli(args(again));
    ASSERT_EQ(b.exit_code, 0) << b.output;
    EXPECT_NE(b.output.find("resuming from " + again + ": epoch 1, batch 0, step 0"), std::string::npos) << b.output;
    expect_same_params(first, again);

    {
        H5::H5File file(again, H5F_ACC_RDWR);
        file.removeAttr("format_version");
        h5::write_attr(file, "format_version", int64_t(1));
    }
    expect_cli(args(again), 2, again + ": training checkpoint of format_version 1, trained under the old convention");
    std::string valid = args(again).substr(args(again).find("--valid ") + 8);
    expect_cli("eval " + again + " --data " + valid.substr(0, valid.find(' ')), 0, "perplexity");
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
    // The checkpoint keeps the best validation epoch's parameters: evaluated on the validation file they give
    // that epoch's validation perplexity (eval batches it alike), and the test perplexity of the run is theirs.
    const lm::CheckpointInfo info = lm::read_checkpoint_info(ckpt);
    ASSERT_GE(info.best_epoch, 1);
    size_t best = 0;
    for (size_t i = 0; i < info.progress.history.size(); i++)
        if (info.progress.history[i].val_ppl < info.progress.history[best].val_ppl) best = i;
    EXPECT_EQ(info.best_epoch, static_cast<int64_t>(best + 1));
    const std::string valid = ptb_slice("valid.txt", 400, 60);
    CliResult on_valid = run_cli("eval " + ckpt + " --data " + valid);
    std::ostringstream want;
    want << "perplexity " << info.progress.history[best].val_ppl << " (";
    EXPECT_NE(on_valid.output.find(want.str()), std::string::npos) << want.str() << "\n" << on_valid.output;
    EXPECT_NE(on_valid.output.find("parameters of epoch " + std::to_string(best + 1) + ", the best validation"), std::string::npos)
        << on_valid.output;
    CliResult last = run_cli("eval " + ckpt + " --params last --data " + valid);
    EXPECT_NE(last.output.find("parameters of the last step"), std::string::npos) << last.output;
    CliResult tested = run_cli(args + " --test " + valid);  // finished: only the test
    EXPECT_NE(tested.output.find("test perplexity: " + want.str().substr(11, want.str().size() - 13) + " (" + valid +
                                 ", parameters of the best validation epoch " + std::to_string(best + 1) + ")"),
              std::string::npos) << tested.output;
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
    expect_cli("train --train " + good + " --valid /nonexistent.txt --epochs 1", 2, "key 'valid': /nonexistent.txt: no such token file");
    expect_cli("train --train " + good + " --valid " + good + " --model lstm-cudnn", 2, "lstm-cudnn");
    expect_cli("train --data /nonexistent", 2, "--data /nonexistent: not a directory");
    expect_cli("eval /nonexistent.h5 --data " + good, 2, "/nonexistent.h5");
    expect_cli("eval " + good + " --data " + good, 2, good);
    const std::string held = scratch_path("held.h5");
    WriterLock lock(held);  // another trainer on that checkpoint
    expect_cli("train --train " + good + " --valid " + good + " --checkpoint " + held, 2,
               held + " is being written by another process (pid " + std::to_string(getpid()));
    expect_cli("train --train " + good + " --valid " + good + " --checkpoint " + held, 2, "); wait for it, or name another --checkpoint");
}

TEST(TrainCli, SweepOfTrainingRunsIsResumableAndReported) {
    const std::string train = ptb_slice("sweep_train.txt", 0, 100), valid = ptb_slice("sweep_valid.txt", 100, 30);
    const std::string yaml = write_scratch("lm_sweep.yaml", "name: lm_test\nbase:\n  model: lstm-onednn\n  input: 16\n  layers: 1\n"
                                                            "  batch: 4\n  seq: 10\n  train.epochs: 2\n  train.max_batches: 5\n"
                                                            "  train.train: " + train + "\n  train.valid: " + valid +
                                                            "\ngrid:\n  hidden: [8, 16]\n  seed: [1, 2]\n");
    const std::string out = scratch_path("lm_sweep.h5");
    expect_cli("sweep " + yaml + " -o " + out, 0, "4 to run");
    expect_cli("sweep " + yaml + " -o " + out, 0, "4 already in");
    const sweep::ResultTable rows = sweep::read_results(out);
    ASSERT_EQ(rows.rows(), 4u);
    std::vector<double> best16;
    for (size_t i = 0; i < rows.rows(); i++) {
        EXPECT_GT(rows.num(i, "train_seconds"), 0) << i;
        EXPECT_EQ(rows.str(i, "train"), "epochs=2,max_batches=5,train=" + train + ",valid=" + valid) << i;
        if (rows.str(i, "hidden") == "16") best16.push_back(rows.num(i, "best_val_ppl"));
    }
    ASSERT_EQ(best16.size(), 2u);
    ASSERT_NE(best16[0], best16[1]) << "the seeds should give different runs";
    CliResult r = run_cli("report " + out);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    for (const char *want : {"training runs", "best_val_ppl", "per setting", "mean over each setting's seeds",
                             "lstm-onednn hidden=16 valid", "run 3 valid"})
        EXPECT_NE(r.output.find(want), std::string::npos) << want << "\n" << r.output;
    // The setting hidden=16: 2 runs (seeds 1,2), the mean of their best validation perplexities.
    std::istringstream lines(r.output);
    std::string line, setting16;
    while (std::getline(lines, line))
        if (line.find("hidden=16  lstm-onednn") != std::string::npos && line.find(" 1,2 ") != std::string::npos) setting16 = line;
    EXPECT_NE(setting16.find(" 2  "), std::string::npos) << r.output;
    char mean[32];
    std::snprintf(mean, sizeof mean, " %.2f ", (best16[0] + best16[1]) / 2);
    EXPECT_NE(setting16.find(mean), std::string::npos) << mean << "\n" << r.output;
    const std::string bad = write_scratch("bad_sweep.yaml", "name: x\nbase:\n  train.lrr: 3\n");
    expect_cli("sweep " + bad + " --dry-run", 2, "train.lrr");
    const std::string bad_value = write_scratch("bad_value.yaml", "name: x\nbase:\n  train.lr: fast\n");
    expect_cli("sweep " + bad_value + " --dry-run", 2, "value 'fast': not a finite number");
}

// A sweep killed in the middle of a training run resumes that run from its checkpoint (in <results>.checkpoints/)
// and ends with the parameters of an uninterrupted sweep, bit for bit.
TEST(TrainCli, SweepKilledMidRunResumesFromItsCheckpoint) {
    const std::string train = ptb_slice("train.txt", 0, 400), valid = ptb_slice("valid.txt", 400, 60);
    const std::string yaml = write_scratch("resume_sweep.yaml", "name: lm_resume\nbase:\n  model: lstm-onednn\n"
                                           "  input: 96\n  hidden: 96\n  layers: 2\n  batch: 8\n  seq: 20\n"
                                           "  dropout: 0.1\n  train.io_dropout: 0.2\n  train.lr: 5\n"
                                           "  train.epochs: 1\n  train.max_batches: 40\n  train.checkpoint_every: 7\n"
                                           "  train.train: " + train + "\n  train.valid: " + valid + "\n");
    const std::string whole = scratch_path("sweep_whole.h5"), killed = scratch_path("sweep_killed.h5");
    expect_cli("sweep " + yaml + " -o " + whole, 0, "1 to run");
    std::string checkpoint_name;
    for (auto &entry : std::filesystem::directory_iterator(whole + ".checkpoints"))
        if (entry.path().extension() == ".h5") checkpoint_name = entry.path().filename().string();
    ASSERT_FALSE(checkpoint_name.empty()) << "no checkpoint in " << whole << ".checkpoints";
    const std::string whole_ckpt = whole + ".checkpoints/" + checkpoint_name, killed_ckpt = killed + ".checkpoints/" + checkpoint_name;
    ASSERT_EQ(lm::read_checkpoint_info(whole_ckpt).progress.step, 40);

    const lm::TrainProgress at_kill = kill_when_checkpointed("sweep " + yaml + " -o " + killed, killed_ckpt, 14);
    ASSERT_EQ(at_kill.epoch, 0);
    ASSERT_GT(at_kill.batch, 0);
    CliResult again = run_cli("sweep " + yaml + " -o " + killed);
    ASSERT_EQ(again.exit_code, 0) << again.output;
    EXPECT_NE(again.output.find("resuming from " + killed_ckpt + ": epoch 1, batch " + std::to_string(at_kill.batch)),
              std::string::npos) << again.output;
    EXPECT_EQ(lm::read_checkpoint_info(killed_ckpt).progress.step, 40);
    expect_same_params(whole_ckpt, killed_ckpt);
    expect_cli("report " + killed, 0, "ok");
}
