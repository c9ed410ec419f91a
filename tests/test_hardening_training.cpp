// Regressions of issue #51, "Training-side inputs": train configs, token files, checkpoints and faults tried as a
// hostile user would. Each reproduces the reported failure (crash, hang, destructive write, silent non-finite
// result, accepted corruption, overflow, late or wrong error) and checks the one-line error (exit 2) or the
// documented handling that replaced it.
#include <gtest/gtest.h>
#include <H5Cpp.h>
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "lm/checkpoint.h"
#include "runtime/h5io.h"
#include "runtime/parse_number.h"
#include "runtime/writer_lock.h"
#include "tests/support/cli.h"

namespace qrnn::test {
namespace {
namespace fs = std::filesystem;

const std::string &train_file() {
    static const std::string path = ptb_slice("train.txt", 0, 60);
    return path;
}
const std::string &valid_file() {
    static const std::string path = ptb_slice("valid.txt", 60, 20);
    return path;
}

// A tiny language model: 3 batches per epoch.
std::string tiny_lm(const std::string &extra = "", int epochs = 1) {
    return "train --train " + train_file() + " --valid " + valid_file() + " --emb 8 --hidden 8 --layers 1 --batch 2 --bptt 5 --epochs " +
           std::to_string(epochs) + " --max_batches 3 --log_seconds 1000 " + extra;
}

std::string scratch_dir(const std::string &name) {
    const std::string dir = scratch_path(name);
    fs::create_directories(dir);
    return dir;
}

// A finished 1-epoch checkpoint (trained once per process), copied to a fresh path.
std::string checkpoint_copy(const std::string &name) {
    static const std::string trained = [] {
        const std::string path = scratch_path("trained.h5");
        CliResult r = run_cli(tiny_lm("--checkpoint " + path));
        EXPECT_EQ(r.exit_code, 0) << r.output;
        return path;
    }();
    const std::string copy = scratch_path(name);
    fs::copy_file(trained, copy, fs::copy_options::overwrite_existing);
    return copy;
}

void set_int_attr(const std::string &file, const std::string &group, const std::string &name, int64_t v) {
    H5::H5File f(file, H5F_ACC_RDWR);
    H5::Group g = f.openGroup(group);
    g.openAttribute(name).write(H5::PredType::NATIVE_INT64, &v);
}

// Sets element 0 of a dataset; with fix_checksum the checksum attribute is rewritten to match.
void set_first_value(const std::string &file, const std::string &dataset, float v, bool fix_checksum) {
    H5::H5File f(file, H5F_ACC_RDWR);
    Tensor<float> t = h5::read_tensor(f, file, dataset);
    t.data[0] = v;
    H5::DataSet ds = f.openDataSet(dataset);
    ds.write(t.data.data(), H5::PredType::NATIVE_FLOAT);
    if (!fix_checksum) return;
    ds.removeAttr("fnv1a64");
    h5::write_attr(ds, "fnv1a64", h5::fnv1a64_hex(t));
}

// 1. Crashes: a target this machine cannot run (SIGSEGV in the JIT runtime), eval --batch 0 (SIGFPE).
TEST(HardeningTraining, ForeignTargetIsRefusedBeforeAnyJit) {
    expect_cli(tiny_lm("--target arm-64-linux"), 2, "target 'arm-64-linux' cannot run on this machine");
    expect_cli("run --target arm-64-linux --batch 2 --seq 4 --input 8 --hidden 8", 2, "target 'arm-64-linux' cannot run on this machine");
}

TEST(HardeningTraining, EvalChecksBatchAndDataBeforeCompiling) {
    const std::string cp = checkpoint_copy("eval.h5");
    expect_cli("eval " + cp + " --data " + valid_file() + " --batch 0", 2, "--batch: must be >= 1 (got 0)");
    expect_cli("eval " + cp + " --data /nonexistent/v.txt", 2, "/nonexistent/v.txt: cannot read token file");
    expect_cli("eval " + cp + " --data " + valid_file(), 0, "perplexity");
}

// 2. Hangs: eval_size and every other count have an upper bound; epochs x batches cannot overflow.
TEST(HardeningTraining, CountsAreRangeChecked) {
    expect_cli("train --task reverse --eval_size 2147483648", 2, "--eval_size: key 'eval_size': value '2147483648': must be <= 1048576");
    expect_cli("train --task sort --epochs 9223372036854775807 --max_batches 2", 2, "key 'epochs': value '9223372036854775807': must be <= 1000000000");
    expect_cli(tiny_lm("--window 1000000"), 2, "key 'window': value '1000000': must be <= 4096");
    expect_cli("train --train " + train_file() + " --valid " + valid_file() + " --emb 100000 --hidden 100000", 2, "above the memory limit");
    expect_cli("train --task reverse --hidden 1000000", 2, "above the memory limit");  // was std::bad_alloc
    expect_cli("train-speed --train " + train_file() + " --models qrnn --vocab 1000000000", 2, "key 'vocab': value '1000000000': must be <= 16777216");
    expect_cli("run --batch 2000000000 --seq 2000000000 --input 8 --hidden 8", 2, "shape too large: seq*batch*width = 3.2e+19 elements");
}

TEST(HardeningTraining, TimeLimitBoundsTheHeldOutEvaluation) {
    CliResult r = run_cli("train --task reverse --hidden 16 --layers 1 --epochs 1 --max_batches 2 --eval_size 1048576 --time_limit 2");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("held-out evaluation cut at the time limit (2 s) after "), std::string::npos) << r.output;
}

// 3. Destructive writes: never onto anything but a regular file; through symlinks to the real file, locked there.
TEST(HardeningTraining, OutputsAreOnlyRegularFiles) {
    const std::string fifo = scratch_path("fifo.h5");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    expect_cli(tiny_lm("--results " + fifo), 2, fifo + ": is a FIFO, cannot write a results file (key 'results') there");
    EXPECT_TRUE(fs::is_fifo(fifo));
    expect_cli("train-speed --train " + train_file() + " --models qrnn --results " + fifo, 2, fifo + ": is a FIFO");
    expect_cli(tiny_lm("--checkpoint /dev/null"), 2, "/dev/null: is a character device, cannot write a training checkpoint");
    expect_cli(tiny_lm("--results " + scratch_dir("adir")), 2, "is a directory");
    const std::string sweep = write_scratch("s.yaml", "name: s\nbase: {batch: 2, seq: 4, input: 8, hidden: 8}\n");
    expect_cli("sweep " + sweep + " -o " + fifo, 2, fifo + ": is a FIFO, cannot write results there");  // before any run
    expect_cli(tiny_lm("--results " + scratch_dir("long") + "/" + std::string(300, 'r')), 2, "file name too long");
}

TEST(HardeningTraining, SymlinkedCheckpointIsWrittenThroughAndLockedOnItsTarget) {
    const std::string real = checkpoint_copy("real.h5"), link = scratch_path("link.h5");
    fs::create_symlink(real, link);
    {
        WriterLock held(link);
        EXPECT_THROW(WriterLock second(real), Error);  // the same file under its real name
    }
    expect_cli(tiny_lm("--checkpoint " + link, 2), 0, "resuming from " + link);
    EXPECT_TRUE(fs::is_symlink(link));
    EXPECT_EQ(lm::read_checkpoint_info(real).progress.epoch, 2);
}

// 4. Non-finite results: the run stops naming the step; checkpoints holding Inf are refused; eval never prints nan.
TEST(HardeningTraining, DivergingRunStopsNamingTheStep) {
    const std::string cp = scratch_path("diverge.h5");
    CliResult r = run_cli(tiny_lm("--lr 9223372036854775808 --clip 0 --checkpoint_every 1 --checkpoint " + cp));
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("training diverged (lower lr, or clip); stopped, " + cp + " keeps the last finite state written"),
              std::string::npos) << r.output;
    EXPECT_NE(r.output.find("step "), std::string::npos) << r.output;
}

TEST(HardeningTraining, NonFiniteCheckpointTensorIsRefused) {
    const std::string cp = checkpoint_copy("inf.h5");
    set_first_value(cp, "/params/decoder/bias", INFINITY, true);
    expect_cli(tiny_lm("--checkpoint " + cp, 2), 2, cp + ": dataset /params/decoder/bias holds a non-finite value (inf at element 0)");
    const std::string best = checkpoint_copy("inf_best.h5");
    set_first_value(best, "/best/embedding", NAN, true);
    expect_cli("eval " + best + " --data " + valid_file(), 2, best + ": dataset /best/embedding holds a non-finite value");
}

// 5. Corrupt checkpoints: checksums, progress, /best epoch.
TEST(HardeningTraining, ChangedTensorFailsItsChecksum) {
    const std::string cp = checkpoint_copy("flip.h5");
    set_first_value(cp, "/params/decoder/bias", 0.125f, false);
    expect_cli(tiny_lm("--checkpoint " + cp, 2), 2, cp + ": dataset /params/decoder/bias: checksum mismatch");
    const std::string no_sum = checkpoint_copy("no_sum.h5");  // its tensors say they have checksums: each must
    {
        H5::H5File f(no_sum, H5F_ACC_RDWR);
        f.openDataSet("/best/embedding").removeAttr("fnv1a64");
    }
    expect_cli("eval " + no_sum + " --data " + valid_file(), 2, no_sum + ": dataset /best/embedding has no checksum");
    const std::string unmarked = checkpoint_copy("unmarked.h5");  // format_version 2: deleting the mark turns nothing off
    {
        H5::H5File f(unmarked, H5F_ACC_RDWR);
        f.removeAttr("checksums");
        f.openDataSet("/best/embedding").removeAttr("fnv1a64");
    }
    expect_cli("eval " + unmarked + " --data " + valid_file(), 2, unmarked + ": dataset /best/embedding has no checksum");
    const std::string old = checkpoint_copy("old.h5");  // format_version 1, from before checksums: evaluated
    {
        H5::H5File f(old, H5F_ACC_RDWR);
        f.removeAttr("checksums");
        f.removeAttr("format_version");
        const int64_t one = 1;
        f.createAttribute("format_version", H5::PredType::NATIVE_INT64, H5::DataSpace()).write(H5::PredType::NATIVE_INT64, &one);
        f.openDataSet("/best/embedding").removeAttr("fnv1a64");
    }
    expect_cli("eval " + old + " --data " + valid_file(), 0, "perplexity");
}

TEST(HardeningTraining, InconsistentProgressIsRefused) {
    for (int64_t step : {0, -1}) {
        const std::string cp = checkpoint_copy("step.h5");
        set_int_attr(cp, "/progress", "step", step);
        expect_cli(tiny_lm("--checkpoint " + cp, 2), 2,
                   cp + ": /progress step " + std::to_string(step) + ": is not epoch x batches per epoch + batch = 1 x 3 + 0");
    }
    const std::string batch = checkpoint_copy("batch.h5");
    set_int_attr(batch, "/progress", "batch", -1);
    expect_cli(tiny_lm("--checkpoint " + batch, 2), 2, batch + ": /progress batch -1: outside [0, 3) (batches per epoch)");
    const std::string best = checkpoint_copy("best.h5");
    set_int_attr(best, "/best", "epoch", 7);
    expect_cli(tiny_lm("--checkpoint " + best, 2), 2, best + ": /best epoch 7 outside [1, 1] (the finished epochs)");
}

// 7. Config files.
TEST(HardeningTraining, ConfigFilesAreCheckedLikeSweepFiles) {
    const std::string dup = write_scratch("dup.yaml", "lr: 1\nhidden: 8\nlr: 2\n");
    expect_cli("train " + dup, 2, "dup.yaml:3: key 'lr': duplicate key");
    expect_cli("train-speed " + dup, 2, "dup.yaml:3: key 'lr': duplicate key");
    const std::string two = write_scratch("two.yaml", "lr: 1\n---\nlr: 2\n");
    expect_cli("train " + two, 2, "two.yaml:2: a second YAML document: a training config holds exactly one");
    const std::string zoneout = write_scratch("zoneout.yaml", "hidden: 8\nzoneout: 1.5\n");
    expect_cli("train " + zoneout, 2, "zoneout.yaml:2: key 'zoneout': value '1.5': must be in [0, 1)");
    expect_cli("train-speed --train " + train_file() + " --models qrnn --epochs 3", 2, "key 'epochs': value '3'");
    expect_cli("train-speed --train " + train_file() + " --models qrnn --checkpoint c.h5", 2, "key 'checkpoint'");
    expect_cli(tiny_lm("--model qrnn-bidir"), 2, "key 'model': 'qrnn-bidir' reads the whole sequence both ways");
    EXPECT_GT(parse_finite("1e-320"), 0.0);  // a subnormal is a finite number
}

// 8. Late validation: every input and output path is checked before training starts.
TEST(HardeningTraining, BadTestFileIsRefusedBeforeTraining) {
    expect_cli(tiny_lm("--test /nonexistent/t.txt"), 2, "key 'test': /nonexistent/t.txt: no such token file");
    expect_cli(tiny_lm("--test " + write_scratch("empty.txt", "")), 2, "empty.txt: token file holds no words (empty)");
    CliResult r = run_cli(tiny_lm("--test " + scratch_dir("adir")));
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_EQ(r.output.find("epoch 1 done"), std::string::npos) << r.output;
}

// 9. Sweeps: a train.KEY beside the run key that sets the same.
TEST(HardeningTraining, SweepTrainKeyBesideRunKeyIsRefused) {
    const std::string yaml = write_scratch("both.yaml", "name: both\nbase: {model: qrnn, batch: 2, seq: 5, input: 8, hidden: 8}\n"
                                                        "grid:\n  train.model: [cnn]\n  train.train: [" + train_file() +
                                                        "]\n  train.valid: [" + valid_file() + "]\n");
    expect_cli("sweep " + yaml + " --dry-run", 2, "key 'model': train.model 'cnn' beside the run key model");
    expect_cli("sweep " + yaml + " --dry-run", 2, "both.yaml:");
    const std::string missing = write_scratch("missing.yaml", "name: m\nbase: {batch: 2, seq: 5, input: 8, hidden: 8}\n"
                                                              "grid:\n  train.train: [/nonexistent/a.txt]\n  train.valid: [" +
                                                              valid_file() + "]\n");
    expect_cli("sweep " + missing + " --dry-run", 2, "/nonexistent/a.txt: no such token file");
}

// 10. A token file is read once: a pipe works.
TEST(HardeningTraining, TrainingFileMayBeAPipe) {
    CliResult r = run_shell("bash -c '" + std::string(QRNN_CLI) + " " + "train --train <(cat " + train_file() + ") --valid " +
                            valid_file() + " --emb 8 --hidden 8 --layers 1 --batch 2 --bptt 5 --epochs 1 --max_batches 2' 2>&1");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("best validation perplexity"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace qrnn::test
