// The synthetic sequence tasks of `qrnn train --task reverse|sort|classify` (nn/seq_tasks.h, lm/seq_classifier.h,
// lm/seq_trainer.h): seeded generators are reproducible and correct (labels, balance, sorting), the classifier's
// gradients (embedding, stack, pooling, output layer) match finite differences with variable lengths, a run is
// reproducible from its seed, the results hold curves and the attention heatmap, bad input is a one-line error
// with exit code 2. (Training through the CLI, `qrnn report` and the notebook: tests/test_notebook_seq.py.)
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "core/error.h"
#include "lm/seq_classifier.h"
#include "lm/seq_trainer.h"
#include "tests/support/cli.h"

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
        shape.stack.hidden = 5, shape.stack.layers = 2, shape.stack.batch = 5, shape.stack.seq = 6, shape.stack.seed = 4;
        shape.vocab = 4, shape.pool = pool;
        lm::SequenceClassifier clf(shape);
        const nn::ClassifyBatch batch = nn::count_batch(small_count(), 5, 3, 0, 0);
        clf.loss(batch, true);
        double worst = 0;
        for (const nn::Param &p : clf.params()) {
            const Tensor<float> grad = *p.grad;
            double scale = 1e-3;
            for (float g : grad.data) scale = std::max(scale, std::abs(static_cast<double>(g)));
            for (size_t i = 0; i < p.value->size(); i += 7) {
                const float saved = p.value->data[i], eps = 1e-2f;
                p.value->data[i] = saved + eps;
                const double up = clf.loss(batch, false);
                p.value->data[i] = saved - eps;
                const double down = clf.loss(batch, false);
                p.value->data[i] = saved;
                const double err = std::abs((up - down) / (2 * eps) - grad.data[i]) / scale;
                EXPECT_LE(err, 2e-2) << model << " " << p.name << "[" << i << "]";
                worst = std::max(worst, err);
            }
        }
        std::cout << model << " (pool " << pool << "): worst relative gradient error " << worst << "\n";
    }
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

TEST(SeqTasks, BadInputIsAOneLineErrorWithExitCode2) {
    expect_cli("train --task translate", 2, "--task: key 'task': value 'translate': must be one of lm, reverse, sort, classify");
    expect_cli("train --task classify --model encdec", 2, "key 'model': task classify trains a classifier over a layer stack");
    expect_cli("train --task reverse --model qrnn", 2, "key 'model': task reverse trains an encoder-decoder (encdec, encdec-noattn), not 'qrnn'");
    expect_cli("train --task classify --attention on", 2, "key 'attention': attention needs an encoder; model 'qrnn-dense' of task classify has none");
    expect_cli("train --attention on --train a.txt --valid b.txt", 2, "key 'attention': attention needs an encoder-decoder (task reverse or sort)");
    expect_cli("train --task sort --model encdec-noattn --attention on", 2, "key 'attention': model 'encdec-noattn' has no attention");
    expect_cli("train --task sort --checkpoint c.h5", 2, "key 'checkpoint': task sort has no checkpoints");
    expect_cli("train --task reverse --min_len 9 --max_len 4", 2, "keys 'min_len', 'max_len': min_len 9 is above max_len 4");
    expect_cli("train --task classify --vocab 1", 2, "key 'vocab': classify needs tokens A = 0 and B = 1");
    expect_cli("train --task classify --max_batches 0", 2, "key 'max_batches': task classify needs steps per epoch >= 1");
    expect_cli("train --task classify --pool max", 2, "--pool: key 'pool': value 'max': must be one of mean, last");
    expect_cli("train --task classify --target_accuracy 1.5", 2, "key 'target_accuracy': must be in (0, 1], got 1.5");
    expect_cli("train --task classify --model qrnn --pooling nope", 2, "unknown pooling 'nope' (known: f, fo, ifo)");
    const std::string yaml = write_scratch("bad_task.yaml", "task: classify\nmodel: encdec\n");
    expect_cli("train " + yaml, 2, "key 'model': task classify trains a classifier");
    CliResult r = run_cli("train --task classify --model encdec");
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
}

}  // namespace qrnn::test
