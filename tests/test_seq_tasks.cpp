// The synthetic sequence tasks of `qrnn train --task reverse|sort|classify` (nn/seq_tasks.h, tasks/seq_classifier.h,
// tasks/seq_trainer.h): seeded generators are reproducible and correct (labels, balance, sorting), the classifier's
// gradients (embedding, stack, pooling, output layer) match finite differences with variable lengths, a run is
// reproducible from its seed, the results hold curves and the attention heatmap, a run killed (SIGKILL) and
// resumed from its checkpoint ends bit-identical to an uninterrupted one, bad input is a one-line error with exit code 2. (Training through the CLI, `qrnn report` and the notebook: tests/test_notebook_seq.py.)
#include <gtest/gtest.h>

#include <H5Cpp.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>
#include <stdexcept>

#include "core/error.h"
#include "runtime/h5io.h"
#include "tasks/seq_checkpoint.h"
#include "tasks/seq_classifier.h"
#include "tasks/seq_trainer.h"
#include "nn/seq2seq.h"
#include "tests/support/cli.h"
#include "tests/support/classifier_check.h"

namespace qrnn::test {
namespace {

nn::CountTask small_count() {
    nn::CountTask t;
    t.vocab = 4, t.min_len = 1, t.max_len = 6;
    return t;
}

// A tiny run of `task` (2 epochs x 3 steps) with the given model.
lm::TrainConfig tiny(const std::string &task, const std::string &model) {
    lm::TrainConfig c = lm::task_defaults(task);
    c.lm.stack.model = model, c.lm.stack.hidden = 8, c.lm.stack.input = 4, c.lm.stack.layers = 1, c.lm.stack.window = 2;
    c.batch = 4, c.epochs = 2, c.max_batches = 3, c.seq.eval_size = 8, c.seq.max_len = 6, c.seq.min_len = 2;
    c.seq.time_limit = 0, c.log_seconds = 1000;
    return c;
}

// Every float dataset under `group` of an HDF5 file, by path.
void collect_datasets(H5::H5File &file, const std::string &path, const std::string &group, std::map<std::string, Tensor<float>> &out) {
    H5::Group g = file.openGroup(group);
    for (hsize_t i = 0; i < g.getNumObjs(); i++) {
        const std::string name = group + "/" + g.getObjnameByIdx(i);
        if (g.getObjTypeByIdx(i) == H5G_GROUP) collect_datasets(file, path, name, out);
        else out.emplace(name, h5::read_tensor(file, path, name));
    }
}
std::map<std::string, Tensor<float>> checkpoint_tensors(const std::string &path) {
    H5::H5File file(path, H5F_ACC_RDONLY);
    std::map<std::string, Tensor<float>> all;
    for (const char *group : {"/params", "/adam"}) collect_datasets(file, path, group, all);
    return all;
}
// Progress (step, epoch) of a sequence-task checkpoint, or {-1, -1} while there is none.
std::pair<int64_t, int64_t> checkpoint_progress(const std::string &path) {
    if (!std::filesystem::exists(path)) return {-1, -1};
    H5::H5File file(path, H5F_ACC_RDONLY);
    H5::Group prog = file.openGroup("/progress");
    return {h5::read_int(prog, path, "step"), h5::read_int(prog, path, "epoch")};
}

}  // namespace

TEST(SeqTasks, CountBatchesAreSeededBalancedAndLabelledByTheCounts) {
    const nn::CountTask task = small_count();
    const nn::ClassifyBatch a = nn::count_batch(task, 7, 5, 0, 2), b = nn::count_batch(task, 7, 5, 0, 2);
    EXPECT_EQ(a.sequences, b.sequences);
    EXPECT_EQ(a.labels, b.labels);
    EXPECT_NE(a.sequences, nn::count_batch(task, 7, 5, 0, 3).sequences);
    EXPECT_NE(a.sequences, nn::count_batch(task, 7, 5, 1, 2).sequences);  // held-out split
    EXPECT_NE(a.sequences, nn::count_batch(task, 7, 6, 0, 2).sequences);  // another seed
    int64_t ones = 0, total = 0;
    for (uint64_t index = 0; index < 100; index++) {
        const nn::ClassifyBatch c = nn::count_batch(task, 20, 1, 0, index);
        for (size_t i = 0; i < c.sequences.size(); i++) {
            const auto &s = c.sequences[i];
            ASSERT_GE(c.lengths[i], task.min_len);
            ASSERT_LE(c.lengths[i], task.max_len);
            ASSERT_EQ(static_cast<int64_t>(s.size()), c.lengths[i]);
            const auto count = [&](int32_t tok) { return std::count(s.begin(), s.end(), tok); };
            ASSERT_NE(count(0), count(1)) << "a tie";
            ASSERT_EQ(c.labels[i], count(0) > count(1) ? 1 : 0);
            for (int64_t t = 0; t < c.T; t++)
                ASSERT_EQ(c.tokens[t * 20 + i], t < c.lengths[i] ? s[t] : 0);
            ones += c.labels[i], total++;
        }
    }
    EXPECT_NEAR(static_cast<double>(ones) / total, 0.5, 0.05);
}

TEST(SeqTasks, SortTargetsAreTheSortedSourceThenEos) {
    nn::TransductionTask task;
    task.sort = true, task.vocab = 5, task.min_len = 3, task.max_len = 9;
    const nn::Seq2SeqBatch b = nn::transduction_batch(task, 6, 2, 1, 4);
    for (size_t i = 0; i < b.sources.size(); i++) {
        std::vector<int64_t> want = b.sources[i];
        std::sort(want.begin(), want.end());
        want.push_back(task.eos());
        EXPECT_EQ(b.targets[i], want);
    }
    task.sort = false;  // the same draws: the reverse task's sources are the same sequences
    EXPECT_EQ(nn::transduction_batch(task, 6, 2, 1, 4).sources, b.sources);
}

// d(mean cross-entropy) against central differences of the float loss, for every parameter (a sample of each),
// with lengths 1..6 in one batch: a bidirectional stack (lengths passed to its layers) pooled by the last step, a
// dense (causal) one by the mean.
TEST(SeqTasks, ClassifierGradientsMatchFiniteDifferences) {
    for (const auto &[model, pool] : {std::pair{"qrnn-bidir", "last"}, {"qrnn-dense", "mean"}}) {
        lm::ClassifierShape shape;
        shape.stack.model = model, shape.stack.pooling = "fo", shape.stack.window = 2, shape.stack.input = 3;
        shape.stack.hidden = 5, shape.stack.layers = 2, shape.stack.seed = 4;
        shape.vocab = 4, shape.pool = pool;
        lm::SequenceClassifier clf(shape, {5, 6});
        const nn::ClassifyBatch batch = nn::count_batch(small_count(), 5, 3, 0, 0);
        const double worst = test::classifier_gradient_error(clf, batch, 7, 2e-2, model);
        std::cout << model << " (pool " << pool << "): worst relative gradient error " << worst << "\n";
    }
}

// Every batch of a task starts at time 0, so the masks are keyed by the training step (set_mask_draw): two steps
// draw different dropout/zoneout masks on the same batch, the same step the same ones (loss and every gradient bit
// for bit), and without masks (evaluation) the step changes nothing. Classifiers (also of layers without masks of
// their own) and the encoder-decoder.
TEST(SeqTasks, EachTrainingStepDrawsItsOwnMasksReproducibly) {
    struct Snapshot {
        double loss;
        std::vector<std::vector<float>> grads;
        bool operator==(const Snapshot &o) const { return loss == o.loss && grads == o.grads; }
    };
    auto check = [](const std::string &what, auto &model, auto set_stochastic, auto set_draw, auto loss) {
        auto at = [&](uint64_t draw) {
            set_draw(draw);
            Snapshot s{loss(), {}};
            for (const nn::Param &p : model.params()) s.grads.emplace_back(p.grad->data.begin(), p.grad->data.end());
            return s;
        };
        set_stochastic(true);
        const Snapshot one = at(1), two = at(2);
        EXPECT_NE(one.loss, two.loss) << what << ": steps 1 and 2 drew the same masks";
        EXPECT_TRUE(at(1) == one) << what << ": step 1 again drew other masks";
        set_stochastic(false);
        EXPECT_TRUE(at(1) == at(2)) << what << ": masks without stochastic mode";
        EXPECT_NE(at(1).loss, one.loss) << what << ": no masks drawn in stochastic mode";
    };
    // LSTM and CNN layers have no masks of their own: the stack drops their inputs (nn::LayerStack).
    for (const char *model : {"qrnn-bidir", "qrnn-dense", "qrnn", "lstm-onednn", "cnn"}) {
        lm::ClassifierShape shape;
        shape.stack.model = model, shape.stack.window = 2, shape.stack.input = 3, shape.stack.hidden = 5;
        shape.stack.layers = 2, shape.stack.seed = 4;
        shape.stack.dropout = 0.3, shape.stack.zoneout = 0.2, shape.vocab = 4;
        lm::SequenceClassifier clf(shape, {5, 6});
        const nn::ClassifyBatch batch = nn::count_batch(small_count(), 5, 3, 0, 0);
        check(model, clf, [&](bool on) { clf.set_stochastic(on); }, [&](uint64_t d) { clf.set_mask_draw(d); },
              [&] { return clf.loss(batch, true); });
    }
    const lm::TrainConfig r = tiny("reverse", "encdec");
    nn::TransductionTask task;
    task.vocab = r.seq.vocab, task.min_len = 2, task.max_len = 5;
    ModelConfig base(r.lm.stack, {});
    base.hidden = 8, base.layers = 2, base.input = task.symbols(), base.dropout = 0.3, base.zoneout = 0.2;
    nn::Seq2Seq s2s(make_encdec_config(base, task.max_len, task.symbols(), true), task.symbols());
    const nn::Seq2SeqBatch batch = nn::transduction_batch(task, 3, 1, 0, 0);
    check("encdec", s2s, [&](bool on) { s2s.net().set_stochastic(on); }, [&](uint64_t d) { s2s.net().set_mask_draw(d); },
          [&] { return s2s.loss_and_grads(batch); });
}

// A log that throws at its n-th line: with a line and a checkpoint after every step, an in-process "kill" of a
// training run right after a step's checkpoint.
struct ThrowAtLine : std::streambuf {
    int lines;
    explicit ThrowAtLine(int n) : lines(n) {}
    int overflow(int c) override {
        if (c == '\n' && --lines == 0) throw std::runtime_error("stopped");
        return c;
    }
};

// A run with masks (a bidirectional QRNN with dropout and zoneout) stopped mid-epoch and resumed from its
// checkpoint ends bit-identical to an uninterrupted one: the masks are a function of the checkpointed step.
TEST(SeqTasks, ResumedRunDrawsTheSameMasks) {
    lm::TrainConfig c = tiny("classify", "qrnn-bidir");
    c.lm.stack.layers = 2, c.lm.stack.dropout = 0.3, c.lm.stack.zoneout = 0.2, c.checkpoint_every = 1, c.log_seconds = 0;
    std::ostringstream log;
    const std::string whole_checkpoint = scratch_path("masks_whole.h5");
    c.checkpoint = whole_checkpoint;
    const lm::SeqResults whole = lm::train_seq_task(c, log);
    c.checkpoint = scratch_path("masks_resumed.h5");
    ThrowAtLine stop(3);  // the header, step 1, step 2 (its checkpoint written)
    std::ostream stopping(&stop);
    stopping.exceptions(std::ios::badbit);
    EXPECT_THROW(lm::train_seq_task(c, stopping), std::runtime_error);
    const lm::SeqResults resumed = lm::train_seq_task(c, log);
    EXPECT_NE(log.str().find("resuming from " + c.checkpoint + ": epoch 1, step 2"), std::string::npos) << log.str();
    ASSERT_EQ(resumed.epochs.size(), 2u);
    for (size_t e = 0; e < 2; e++) EXPECT_EQ(resumed.epochs[e].train_loss, whole.epochs[e].train_loss) << e;
    const auto expected = checkpoint_tensors(whole_checkpoint), got = checkpoint_tensors(c.checkpoint);
    ASSERT_EQ(expected.size(), got.size());
    for (auto &[name, t] : expected) EXPECT_TRUE(got.at(name).data == t.data) << name << " differs";
}

TEST(SeqTasks, ARunIsReproducibleFromItsSeedAndRecordsCurvesAndHeatmap) {
    std::ostringstream log;
    const lm::TrainConfig c = tiny("classify", "qrnn-dense");
    const lm::SeqResults a = lm::train_seq_task(c, log), b = lm::train_seq_task(c, log);
    ASSERT_EQ(a.epochs.size(), 2u);
    for (size_t e = 0; e < 2; e++) {
        EXPECT_EQ(a.epochs[e].train_loss, b.epochs[e].train_loss);
        EXPECT_EQ(a.epochs[e].accuracy, b.epochs[e].accuracy);
        EXPECT_EQ(a.epochs[e].step, 3.0 * (e + 1));
    }
    lm::TrainConfig other = c;
    other.lm.stack.seed = 2;
    EXPECT_NE(lm::train_seq_task(other, log).epochs[0].train_loss, a.epochs[0].train_loss);
    EXPECT_FALSE(a.heatmap);

    lm::TrainConfig r = tiny("reverse", "encdec");
    r.results = scratch_path("reverse.h5");
    const lm::SeqResults rev = lm::train_seq_task(r, log);
    ASSERT_TRUE(rev.heatmap);
    const lm::SeqResults read = lm::read_seq_results(r.results);
    ASSERT_TRUE(read.heatmap);
    const lm::SeqHeatmap &h = *read.heatmap;
    EXPECT_EQ(h.alpha.dim(0), static_cast<int64_t>(h.output.size()));
    EXPECT_EQ(h.alpha.dim(1), static_cast<int64_t>(h.source.size()));
    for (int64_t t = 0; t < h.alpha.dim(0); t++) {
        double sum = 0;
        for (int64_t s = 0; s < h.alpha.dim(1); s++) sum += h.alpha(t, s);
        EXPECT_NEAR(sum, 1.0, 1e-4);
    }
    EXPECT_EQ(read.epochs.size(), 2u);
    EXPECT_EQ(std::get<std::string>(read.attrs.at("metric")), "exact_match");
    r.seq.attention = "off";
    EXPECT_FALSE(lm::train_seq_task(r, log).heatmap);
}

// qrnn train --task classify killed mid-epoch (SIGKILL) then run again: it resumes from its checkpoint and ends
// with parameters and Adam moments bit-identical to an uninterrupted run; another configuration is refused.
TEST(SeqTasks, KilledMidEpochThenResumedIsBitIdentical) {
    auto args = [](const std::string &checkpoint) {
        // oneDNN's LSTM: no JIT compilation, so the 200 steps (~5 ms each) start at once (it has no masks: a run with
        // them resumed is ResumedRunDrawsTheSameMasks).
        return "train --task classify --model lstm-onednn --emb 8 --hidden 24 --layers 2 --dropout 0.2 --batch 16"
               " --max_len 20 --epochs 2 --max_batches 100 --checkpoint_every 4 --eval_size 64 --time_limit 0"
               " --log_seconds 1000 --checkpoint " +
               checkpoint;
    };
    const std::string whole = scratch_path("seq_whole.h5"), killed = scratch_path("seq_killed.h5");
    CliResult a = run_cli(args(whole));
    ASSERT_EQ(a.exit_code, 0) << a.output;
    ASSERT_EQ(checkpoint_progress(whole), std::make_pair(int64_t(200), int64_t(2)));

    kill_cli_when(args(killed), [&] { return checkpoint_progress(killed).first >= 8; });
    const auto [step, epoch] = checkpoint_progress(killed);
    ASSERT_GE(step, 8);
    ASSERT_LT(step, 200);
    CliResult b = run_cli(args(killed));
    ASSERT_EQ(b.exit_code, 0) << b.output;
    EXPECT_NE(b.output.find("resuming from " + killed + ": epoch " + std::to_string(epoch + 1) + ", step " + std::to_string(step)),
              std::string::npos) << b.output;
    const auto expected = checkpoint_tensors(whole), got = checkpoint_tensors(killed);
    ASSERT_EQ(expected.size(), got.size());
    for (auto &[name, t] : expected) EXPECT_TRUE(got.at(name).data == t.data) << name << " differs";

    CliResult again = run_cli(args(killed));  // finished: nothing to train
    EXPECT_EQ(again.exit_code, 0) << again.output;
    EXPECT_NE(again.output.find("resuming from " + killed + ": epoch 3, step 200"), std::string::npos) << again.output;

    std::string other = args(killed);
    other.replace(other.find("--hidden 24"), 11, "--hidden 25");
    expect_cli(other, 2, "checkpoint of another configuration (key 'hidden' is '24' there, '25' here)");
}

TEST(SeqTasks, BadInputIsAOneLineErrorWithExitCode2) {
    expect_cli("train --task translate", 2, "--task: key 'task': value 'translate': must be one of lm, reverse, sort, classify");
    expect_cli("train --task classify --model encdec", 2, "key 'model': task classify trains a classifier over a layer stack");
    expect_cli("train --task reverse --model qrnn", 2, "key 'model': task reverse trains an encoder-decoder (encdec, encdec-noattn), not 'qrnn'");
    expect_cli("train --task classify --attention on", 2, "key 'attention': attention needs an encoder; model 'qrnn-dense' of task classify has none");
    expect_cli("train --attention on --train a.txt --valid b.txt", 2, "key 'attention': attention needs an encoder-decoder (task reverse or sort)");
    expect_cli("train --task sort --model encdec-noattn --attention on", 2, "key 'attention': model 'encdec-noattn' has no attention");
    expect_cli("train --task reverse --min_len 9 --max_len 4", 2, "keys 'min_len', 'max_len': min_len 9 is above max_len 4");
    expect_cli("train --task classify --vocab 1", 2, "key 'vocab': classify needs tokens A = 0 and B = 1");
    expect_cli("train --task classify --max_batches 0", 2, "key 'max_batches': task classify needs steps per epoch >= 1");
    expect_cli("train --task classify --pool median", 2, "--pool: key 'pool': value 'median': must be one of mean, last, max");
    expect_cli("train --task classify --target_accuracy 1.5", 2, "key 'target_accuracy': must be in (0, 1], got 1.5");
    expect_cli("train --task classify --model qrnn --pooling nope", 2, "unknown pooling 'nope' (known: f, fo, ifo)");
    // The encoder-decoder's rates are checked as a stack's (they were accepted: zoneout 1.5 trained to 0 accuracy).
    expect_cli("train --task reverse --zoneout 1.5", 2, "--zoneout: key 'zoneout': value '1.5': must be in [0, 1)");
    expect_cli("train --task sort --dropout -0.5", 2, "--dropout: key 'dropout': value '-0.5': must be in [0, 1)");
    // A key the task does not read is refused unless it keeps the task's default, never silently ignored.
    expect_cli("train --task reverse --lr_decay 0", 2, "key 'lr_decay': value '0': task reverse does not use it (task lm only)");
    expect_cli("train --task classify --io_dropout 0.2", 2, "key 'io_dropout': value '0.2': task classify does not use it (task lm only)");
    expect_cli("train --task sort --pool last", 2, "key 'pool': value 'last': task sort does not use it (tasks classify and classify-text only)");
    expect_cli("train --train a.txt --valid b.txt --max_len 10", 2, "key 'max_len': value '10': task lm does not use it (synthetic tasks only)");
    expect_cli("train --train a.txt --valid b.txt --pool last", 2, "key 'pool': value 'last': task lm does not use it (tasks classify and classify-text only)");
    const std::string yaml = write_scratch("bad_task.yaml", "task: classify\nmodel: encdec\n");
    expect_cli("train " + yaml, 2, "key 'model': task classify trains a classifier");
    CliResult r = run_cli("train --task classify --model encdec");
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
}

}  // namespace qrnn::test
