// `qrnn train --task classify-text` (tasks/text_task.h, docs/text_tasks.md) through the CLI: on scratch subsets of
// the shipped corpus-source files both fronts train and print the accuracy line and their parameter counts (the
// projection's differ from the embedding's by exactly the table it does not have); a tiny separable file is
// learnt; the same command gives the same numbers (seeded shuffle), also when killed and resumed from its
// checkpoint; `--model bow` prints the bag-of-words line;
// a malformed data file is one line naming file and line, exit code 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "tests/support/cli.h"

namespace qrnn::test {
namespace {

// The first `lines` lines of data/corpus-source/<split>.tsv.
std::string head_of(const std::string &split, int lines) {
    std::ifstream in(std::string(QRNN_SOURCE_DIR) + "/data/corpus-source/" + split + ".tsv");
    std::string text, line;
    for (int i = 0; i < lines && std::getline(in, line); i++) text += line + "\n";
    return text;
}

// A scratch directory `name` holding train.tsv, valid.tsv, test.tsv.
std::string scratch_data(const std::string &name, const std::string &train, const std::string &valid, const std::string &test) {
    const std::string dir = scratch_path(name);
    std::filesystem::create_directories(dir);
    for (auto &[file, text] : {std::pair{"train.tsv", train}, {"valid.tsv", valid}, {"test.tsv", test}})
        std::ofstream(dir + "/" + file) << text;
    return dir;
}

struct AccuracyLine {
    double train = 0, valid = 0, test = 0;
    long long vocabulary = 0, parameters = 0;
};

// The accuracy line "<what> on <data>: train X valid Y test Z, vocabulary V, parameters P" (gtest failure if absent).
AccuracyLine accuracy_line(const std::string &output, const std::string &what) {
    const std::regex line(what + R"( on [^:]+: train (0\.\d{4}|1\.0000) valid (0\.\d{4}|1\.0000) test (0\.\d{4}|1\.0000), )"
                                 R"(vocabulary (\d+), parameters (\d+)\n)");
    std::smatch m;
    AccuracyLine a;
    EXPECT_TRUE(std::regex_search(output, m, line)) << output;
    if (m.empty()) return a;
    a.train = std::stod(m[1]), a.valid = std::stod(m[2]), a.test = std::stod(m[3]);
    a.vocabulary = std::stoll(m[4]), a.parameters = std::stoll(m[5]);
    return a;
}

const std::string kSmall = " --task classify-text --model qrnn-bidir --emb 8 --hidden 8 --layers 1 --log_seconds 100";

TEST(TextTask, BothFrontsTrainOnCorpusSourceSubsetsAndCountTheirParameters) {
    const std::string data = scratch_data("corpus", head_of("train", 300), head_of("valid", 100), head_of("test", 100));
    const CliResult embedding = run_cli("train --data " + data + kSmall + " --epochs 2");
    ASSERT_EQ(embedding.exit_code, 0) << embedding.output;
    EXPECT_NE(embedding.output.find("task classify-text: train.tsv 300, valid.tsv 100, test.tsv 100 examples, 2 classes"),
              std::string::npos) << embedding.output;
    const AccuracyLine e = accuracy_line(embedding.output, R"(qrnn-bidir \(front embedding, pool mean\))");
    const CliResult projection = run_cli("train --data " + data + kSmall + " --epochs 2 --front projection --projection_features 32 --pool max");
    ASSERT_EQ(projection.exit_code, 0) << projection.output;
    const AccuracyLine p = accuracy_line(projection.output, R"(qrnn-bidir \(front projection, pool max\))");
    EXPECT_EQ(p.vocabulary, e.vocabulary);
    // The same stack and output layer; the embedding's table [vocabulary][8] against the bottleneck [32][8] + [8].
    EXPECT_EQ(e.parameters - p.parameters, e.vocabulary * 8 - (32 * 8 + 8));
    EXPECT_NE(embedding.output.find(" " + std::to_string(e.parameters) + " parameters; batch 32, 2 epochs x 10 steps"),
              std::string::npos) << embedding.output;
}

// A separable file: "yes" for sunny words, "no" for rainy ones (flipped: the other way round), 64 training and 16
// valid lines, as train.tsv, valid.tsv and test.tsv (= valid) of scratch directory `name`.
std::string separable_data(const std::string &name, bool flipped = false) {
    std::string train, valid;
    const char *yes = flipped ? "no" : "yes", *no = flipped ? "yes" : "no";
    for (int i = 0; i < 64; i++) {
        const std::string n = std::to_string(i % 7);
        train += std::string(i % 2 ? yes : no) + (i % 2 ? "\tsun sky light w" : "\train cloud dark w") + n + "\n";
        if (i < 16) valid += std::string(i % 2 ? yes : no) + (i % 2 ? "\tsky sun x" : "\tcloud rain x") + n + "\n";
    }
    return scratch_data(name, train, valid, valid);
}

TEST(TextTask, LearnsASeparableFileAndRepeatsItselfFromTheSeed) {
    const std::string data = separable_data("separable");
    const std::string args = "train --data " + data + kSmall + " --epochs 10 --batch 8 --lr 0.01 --front projection --projection_features 64";
    const CliResult first = run_cli(args);
    ASSERT_EQ(first.exit_code, 0) << first.output;
    const AccuracyLine a = accuracy_line(first.output, R"(qrnn-bidir \(front projection, pool mean\))");
    EXPECT_GE(a.train, 0.95) << first.output;
    EXPECT_GE(a.valid, 0.95) << first.output;
    const CliResult again = run_cli(args);
    const AccuracyLine b = accuracy_line(again.output, R"(qrnn-bidir \(front projection, pool mean\))");
    EXPECT_EQ(a.train, b.train);
    EXPECT_EQ(a.valid, b.valid);
    EXPECT_EQ(a.parameters, b.parameters);
}

TEST(TextTask, AKilledRunResumesFromItsCheckpointToTheSameAccuracies) {
    const std::string data = scratch_data("resume", head_of("train", 300), head_of("valid", 100), head_of("test", 100));
    const std::string args = "train --data " + data + kSmall + " --epochs 30 --batch 8 --checkpoint_every 7 "
                             "--front projection --projection_features 64 --checkpoint ";
    const CliResult whole = run_cli(args + scratch_path("whole.h5"));
    ASSERT_EQ(whole.exit_code, 0) << whole.output;
    const std::string killed = scratch_path("killed.h5");
    kill_cli_when(args + killed, [&] { return std::filesystem::exists(killed); });
    const CliResult resumed = run_cli(args + killed);
    ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
    EXPECT_NE(resumed.output.find("resuming from " + killed), std::string::npos) << resumed.output;
    const std::string what = R"(qrnn-bidir \(front projection, pool mean\))";
    const AccuracyLine a = accuracy_line(whole.output, what), b = accuracy_line(resumed.output, what);
    EXPECT_EQ(a.train, b.train);
    EXPECT_EQ(a.valid, b.valid);
    EXPECT_EQ(a.test, b.test);
}

// Distillation (--teacher): a student taught only by the teacher's soft targets (distill_weight 1) follows the
// teacher, even against its own labels: the teacher learnt the flipped file, so the student is wrong on nearly every
// valid line; half and half it runs and repeats itself. The keys' errors are one line.
TEST(TextTask, DistilsATeacherCheckpoint) {
    const std::string data = separable_data("distil"), flipped = separable_data("distil_flipped", true);
    const std::string common = kSmall + " --epochs 10 --batch 8 --lr 0.01 ";
    const std::string teacher = scratch_path("flipped_teacher.h5");
    const CliResult t = run_cli("train --data " + flipped + common + "--checkpoint " + teacher);
    ASSERT_EQ(t.exit_code, 0) << t.output;
    EXPECT_GE(accuracy_line(t.output, R"(qrnn-bidir \(front embedding, pool mean\))").valid, 0.95) << t.output;
    const std::string student = "train --data " + data + common + "--front projection --projection_features 64 --teacher " + teacher;
    const std::string what = R"(qrnn-bidir \(front projection, pool mean\))";
    const CliResult follows = run_cli(student + " --distill_weight 1 --distill_temperature 1");
    ASSERT_EQ(follows.exit_code, 0) << follows.output;
    EXPECT_LE(accuracy_line(follows.output, what).valid, 0.05) << follows.output;
    // An ensemble (a list of teachers) distils the mean of their logits: the teacher twice is the teacher.
    const CliResult twice = run_cli(student + "," + teacher + " --distill_weight 1 --distill_temperature 1");
    ASSERT_EQ(twice.exit_code, 0) << twice.output;
    EXPECT_EQ(accuracy_line(twice.output, what).train, accuracy_line(follows.output, what).train) << twice.output;
    EXPECT_EQ(accuracy_line(twice.output, what).valid, accuracy_line(follows.output, what).valid) << twice.output;
    const std::string checkpoint = scratch_path("distilled.h5");
    const CliResult half = run_cli(student + " --distill_mix 0.5 --checkpoint " + checkpoint), again = run_cli(student + " --distill_mix 0.5");
    ASSERT_EQ(half.exit_code, 0) << half.output;
    EXPECT_EQ(accuracy_line(half.output, what).train, accuracy_line(again.output, what).train);
    std::filesystem::rename(teacher, teacher + ".moved");  // the distilled checkpoint evaluates without its teacher
    const CliResult eval = run_cli("eval " + checkpoint + " --data " + data + "/valid.tsv");
    EXPECT_EQ(eval.exit_code, 0) << eval.output;
    EXPECT_NE(eval.output.find("accuracy "), std::string::npos) << eval.output;
    std::filesystem::rename(teacher + ".moved", teacher);

    expect_cli(student + " --distill_weight 1.5", 2, "key 'distill_weight': must be in [0, 1], got 1.5");
    expect_cli(student + " --distill_temperature 0", 2, "key 'distill_temperature': must be > 0, got 0");
    expect_cli(student + " --distill_mix 2", 2, "key 'distill_mix': must be in [0, 1], got 2");
    expect_cli("train --data " + data + common + "--distill_weight 0.7", 2,
               "key 'distill_weight': value '0.7': task classify-text does not use it (distillation only: set 'teacher')");
    expect_cli("train --data " + data + common + "--teacher " + scratch_path("none.h5"), 2,
               "key 'teacher': " + scratch_path("none.h5") + ": no such file (a classify-text checkpoint)");
    expect_cli(student + ",", 2, "key 'teacher': value '" + teacher + ",': empty checkpoint name in the list");
    expect_cli(student + "," + scratch_path("none.h5"), 2,
               "key 'teacher': " + scratch_path("none.h5") + ": no such file (a classify-text checkpoint)");
    expect_cli("train --task classify --teacher " + teacher, 2, "key 'teacher': value '" + teacher + "': task classify does not use it");
    const std::string other = scratch_data("other_labels", "a\tsun\nb\train\n", "a\tsun\n", "a\tsun\n");
    expect_cli("train --data " + other + common + "--teacher " + teacher, 2,
               teacher + ": its labels (no, yes) are not those of the data (a, b)");
    // A teacher that is not a classify-text checkpoint: a text file, or the synthetic task classify's checkpoint.
    expect_cli("train --data " + data + common + "--teacher " + data + "/train.tsv", 2, data + "/train.tsv");
    const std::string synthetic = scratch_path("synthetic_classify.h5");
    ASSERT_EQ(run_cli("train --task classify --emb 8 --hidden 8 --layers 1 --epochs 1 --max_batches 2 --eval_size 8 "
                      "--log_seconds 100 --checkpoint " + synthetic).exit_code, 0);
    expect_cli("train --data " + data + common + "--teacher " + synthetic, 2,
               synthetic + ": a checkpoint of task classify, not classify-text");
}

TEST(TextTask, BagOfWordsPrintsTheSameLineFormat) {
    const std::string data = scratch_data("bow", head_of("train", 300), head_of("valid", 100), head_of("test", 100));
    const CliResult r = run_cli("train --task classify-text --model bow --data " + data);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const AccuracyLine a = accuracy_line(r.output, "bag of words");
    EXPECT_EQ(a.parameters, (a.vocabulary - 1) * 2 + 2);  // features (vocabulary without the padding) x classes + classes
    EXPECT_GT(a.train, 0.9) << r.output;
    expect_cli("train --task classify-text --model bow --data " + data + " --hidden 8", 2,
               "key 'hidden': value '8': model bow has fixed settings (tasks/bag_of_words.h)");
}

TEST(TextTask, BadDataIsAOneLineErrorNamingFileAndLine) {
    const std::string data = scratch_data("bad", "a\tx y\nb\tz w\nb z w\n", "a\tx\n", "a\tx\n");
    for (const std::string model : {"qrnn-bidir", "bow"}) {
        const CliResult r = run_cli("train --task classify-text --model " + model + " --data " + data);
        EXPECT_EQ(r.exit_code, 2) << r.output;
        EXPECT_NE(r.output.find(data + "/train.tsv:3: no TAB between label and text"), std::string::npos) << r.output;
        EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
    }
    const std::string empty = scratch_path("no_files");
    std::filesystem::create_directories(empty);
    expect_cli("train --task classify-text --data " + empty, 2, "--data " + empty + ": no train.tsv");
    expect_cli("train --task classify-text", 2, "key 'train': task classify-text needs a train file");
    expect_cli("train --task classify-text --data " + data + " --max_len 10", 2,
               "key 'max_len': value '10': task classify-text does not use it");
    expect_cli("train --task classify --min_count 2", 2, "key 'min_count': value '2': task classify does not use it (task classify-text only)");
}

}  // namespace
}  // namespace qrnn::test
