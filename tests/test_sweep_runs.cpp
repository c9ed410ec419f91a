// Running sweeps through the CLI: resume after SIGKILL at arbitrary moments (no torn file, no duplicate
// rows), shards whose union is the whole sweep, merge, failed runs recorded, a second writer refused, and
// the report's speed-up grid.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "core/error.h"
#include "sweep/merge.h"
#include "sweep/results_file.h"
#include "sweep/sweep_spec.h"
#include "tests/support/cli.h"

using namespace qrnn;
using namespace qrnn::sweep;

namespace {

std::string write_file(const std::string &name, const std::string &text) {
    std::string path = test::scratch_path(name);
    std::ofstream(path) << text;
    return path;
}

std::set<std::string> ids_of(const ResultTable &t) {
    std::set<std::string> ids;
    for (size_t i = 0; i < t.rows(); i++) ids.insert(t.str(i, "run_id"));
    return ids;
}

size_t rows_or_zero(const std::string &path) {
    try {
        return read_results(path).rows();
    } catch (const Error &) {
        return 0;  // not created yet
    }
}

pid_t spawn_cli(const std::vector<std::string> &args) {
    pid_t pid = fork();
    if (pid == 0) {
        std::vector<char *> argv{const_cast<char *>(QRNN_CLI)};
        for (auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
        argv.push_back(nullptr);
        freopen("/dev/null", "w", stdout);
        freopen("/dev/null", "w", stderr);
        execv(QRNN_CLI, argv.data());
        _exit(127);
    }
    return pid;
}

// Tiny shapes, one pipeline: each process compiles once, runs take microseconds.
const char *kTinySweep =
    "name: tiny\nbase: {seq: 3, input: 5, hidden: 7, warmup: 0, repeats: 1, verify: true}\n"
    "grid:\n  batch: [1, 2, 3, 4, 5, 6, 7]\n";

TEST(SweepRuns, KilledAtAnyMomentResumesWithoutDuplicates) {
    // 80 runs of microseconds: the runner spends most of its time writing the results file, so kills land
    // inside writes as well as between them.
    std::string yaml = write_file("many.yaml",
                                  "name: many\nbase: {input: 3, hidden: 5, warmup: 0, repeats: 1}\n"
                                  "grid:\n  batch: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n  seq: [1, 2, 3, 4, 5, 6, 7, 8]\n");
    const size_t kRuns = 80;
    std::string out = test::scratch_path("many.h5");
    const int extra_us[] = {0, 300, 700, 1100, 1900, 2300, 3100, 4700};
    int killed_mid_sweep = 0;
    for (int kill = 0; kill < 8; kill++) {
        const size_t before = rows_or_zero(out);
        pid_t pid = spawn_cli({"sweep", yaml, "-o", out});
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        int status = 0;
        bool exited = false;
        while (rows_or_zero(out) <= before && std::chrono::steady_clock::now() < deadline) {
            if (waitpid(pid, &status, WNOHANG) == pid) {
                exited = true;
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        std::this_thread::sleep_for(std::chrono::microseconds(extra_us[kill]));
        if (!exited) {
            ::kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
        }
        ResultTable t = read_results(out);  // opens after every kill
        EXPECT_EQ(ids_of(t).size(), t.rows()) << "duplicate run ids after kill " << kill;
        killed_mid_sweep += !exited && t.rows() < kRuns;
    }
    EXPECT_GE(killed_mid_sweep, 3);
    auto r = test::run_cli("sweep " + yaml + " -o " + out);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    ResultTable t = read_results(out);
    EXPECT_EQ(t.rows(), kRuns);
    EXPECT_EQ(ids_of(t).size(), kRuns);
    std::set<std::string> expected;
    for (auto &run : load_sweep(yaml).runs) expected.insert(run.id);
    EXPECT_EQ(ids_of(t), expected);
    for (size_t i = 0; i < t.rows(); i++) EXPECT_EQ(t.str(i, "status"), "ok");
    for (auto &e : std::filesystem::directory_iterator(std::filesystem::path(out).parent_path()))  // killed writers' temporaries removed
        EXPECT_EQ(e.path().filename().string().find(std::filesystem::path(out).filename().string() + ".tmp-"), std::string::npos);
    r = test::run_cli("sweep " + yaml + " -o " + out);  // nothing left to do
    EXPECT_NE(r.output.find("ran 0, 80 already done"), std::string::npos) << r.output;
}

TEST(SweepRuns, ShardsUnionIsTheWholeSweepAndMergeDropsDuplicates) {
    std::string yaml = write_file("tiny.yaml", kTinySweep);
    std::vector<std::string> shards;
    std::set<std::string> seen;
    size_t total = 0;
    for (int i = 0; i < 3; i++) {
        shards.push_back(test::scratch_path("shard" + std::to_string(i) + ".h5"));
        auto r = test::run_cli("sweep " + yaml + " --shard " + std::to_string(i) + "/3 -o " + shards.back());
        ASSERT_EQ(r.exit_code, 0) << r.output;
        ResultTable t = read_results(shards.back());
        for (size_t row = 0; row < t.rows(); row++) EXPECT_EQ(static_cast<int>(t.num(row, "index")) % 3, i);
        total += t.rows();
        for (auto &id : ids_of(t)) EXPECT_TRUE(seen.insert(id).second) << "run " << id << " in two shards";
    }
    std::set<std::string> whole;
    for (auto &run : load_sweep(yaml).runs) whole.insert(run.id);
    EXPECT_EQ(total, 7u);
    EXPECT_EQ(seen, whole);

    std::string merged = test::scratch_path("merged.h5");
    auto r = test::run_cli("merge " + shards[0] + " " + shards[1] + " " + shards[2] + " " + shards[0] + " -o " + merged);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("merged 4 files: 7 runs, 3 duplicate run ids dropped"), std::string::npos) << r.output;
    ResultTable m = read_results(merged);
    EXPECT_EQ(ids_of(m), whole);
    EXPECT_EQ(m.rows(), 7u);
    EXPECT_NE(value_str(m.attrs["sweep_yaml"]).find("name: tiny"), std::string::npos);
    r = test::run_cli("merge " + shards[0] + " -o " + merged);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find("exists (use --force"), std::string::npos) << r.output;

    // A resumed whole sweep into the merged file has nothing left to do; --dry-run shows the state.
    r = test::run_cli("sweep " + yaml + " -o " + merged);
    EXPECT_NE(r.output.find("ran 0, 7 already done"), std::string::npos) << r.output;
    r = test::run_cli("sweep " + yaml + " --dry-run -o " + shards[1]);
    EXPECT_NE(r.output.find("done (ok)"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("7 runs in the sweep, 7 in this shard, 5 to run"), std::string::npos) << r.output;
}

TEST(SweepRuns, MergePrefersAnOkRowOverAFailedOne) {
    ResultTable failed, ok;
    for (auto *t : {&failed, &ok}) t->attrs["format"] = std::string(kResultsFormat);
    failed.append({{"run_id", std::string("r1")}, {"status", std::string("failed")}, {"error", std::string("boom")}});
    ok.append({{"run_id", std::string("r1")}, {"status", std::string("ok")}, {"median_ms", 1.5}});
    ok.append({{"run_id", std::string("r2")}, {"status", std::string("ok")}});
    std::string a = test::scratch_path("failed.h5"), b = test::scratch_path("ok.h5");
    write_results(a, failed);
    write_results(b, ok);
    MergeSummary summary;
    ResultTable m = merge_results({a, b}, summary);
    ASSERT_EQ(m.rows(), 2u);
    EXPECT_EQ(summary.duplicates, 1);
    EXPECT_EQ(m.str(static_cast<size_t>(m.index_of("r1")), "status"), "ok");
    EXPECT_DOUBLE_EQ(m.num(static_cast<size_t>(m.index_of("r1")), "median_ms"), 1.5);
}

TEST(SweepRuns, FailedRunsAreRecordedAndTheSweepGoesOn) {
    std::string yaml = write_file("mixed.yaml",
                                  "name: mixed\nbase: {batch: 2, seq: 3, input: 5, hidden: 7, warmup: 0, repeats: 1}\n"
                                  "grid:\n  model: [no-such-model, qrnn]\n");
    std::string out = test::scratch_path("new_dir") + "/mixed.h5";  // the directory is created
    auto r = test::run_cli("sweep " + yaml + " -o " + out);
    EXPECT_EQ(r.exit_code, 2);  // validated first: nothing runs
    EXPECT_NE(r.output.find("key 'grid.model': unknown model 'no-such-model'"), std::string::npos) << r.output;
    setenv("DNNL_VERBOSE", "0", 1);  // recorded in the file's environment attribute
    r = test::run_cli("sweep " + yaml + " --skip-model-check -o " + out);
    unsetenv("DNNL_VERBOSE");
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("2/2  elapsed "), std::string::npos) << r.output;  // progress with ETA on stderr (any duration)
    EXPECT_NE(r.output.find("  #1 model=qrnn: ok"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("ETA "), std::string::npos) << r.output;
    ResultTable t = read_results(out);
    EXPECT_NE(value_str(t.attrs["environment"]).find("DNNL_VERBOSE=0"), std::string::npos);
    EXPECT_NE(value_str(t.attrs["git_commit"]), "");
    EXPECT_GE(std::get<int64_t>(t.attrs["cores"]), 1);
    ASSERT_EQ(t.rows(), 2u);
    EXPECT_EQ(t.str(0, "status"), "failed");
    EXPECT_NE(t.str(0, "error").find("unknown model 'no-such-model'"), std::string::npos);
    EXPECT_EQ(t.str(1, "status"), "ok");
    EXPECT_GT(t.num(1, "median_ms"), 0);
    r = test::run_cli("report " + out);
    EXPECT_NE(r.output.find("status: failed 1 ok 1"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("  failed (#0): unknown model 'no-such-model'"), std::string::npos) << r.output;
    // --retry-failed runs it again (still failing) and replaces its row rather than adding one.
    r = test::run_cli("sweep " + yaml + " --skip-model-check --retry-failed -o " + out);
    EXPECT_NE(r.output.find("ran 1, 1 already done"), std::string::npos) << r.output;
    EXPECT_EQ(read_results(out).rows(), 2u);
}

TEST(SweepRuns, InterleavedGroupsMeasureSideBySideAndRecordUnavailableMembers) {
    std::string yaml = write_file("interleave.yaml",
                                  "name: il\nbase: {seq: 4, input: 8, hidden: 8, warmup: 1, repeats: 3, verify: true}\n"
                                  "grid:\n  batch: [1, 2, 3]\n  model: [qrnn, lstm-onednn, lstm-cudnn]\ninterleave: model\n");
    std::vector<std::string> shards{test::scratch_path("il0.h5"), test::scratch_path("il1.h5")};
    for (int i = 0; i < 2; i++) {
        auto r = test::run_cli("sweep " + yaml + " --shard " + std::to_string(i) + "/2 -o " + shards[i]);
        EXPECT_EQ(r.exit_code, 0) << r.output;  // unavailable is not a failure
    }
    // Shards take whole groups: batch 1 and 3 in shard 0 (groups #0, #6), batch 2 in shard 1 (#3).
    EXPECT_EQ(read_results(shards[0]).rows(), 6u);
    EXPECT_EQ(read_results(shards[1]).rows(), 3u);
    std::string all = test::scratch_path("il.h5");
    ASSERT_EQ(test::run_cli("merge " + shards[0] + " " + shards[1] + " -o " + all).exit_code, 0);
    ResultTable t = read_results(all);
    ASSERT_EQ(t.rows(), 9u);
    for (size_t i = 0; i < t.rows(); i++) {
        if (t.str(i, "model") == "lstm-cudnn") {
            EXPECT_EQ(t.str(i, "status"), "unavailable");
            EXPECT_NE(t.str(i, "error").find("no CUDA device"), std::string::npos);
            EXPECT_EQ(t.num(i, "interleaved"), 1);
        } else {
            EXPECT_EQ(t.str(i, "status"), "ok") << t.str(i, "error");
            EXPECT_EQ(t.num(i, "interleaved"), 2);  // qrnn beside lstm-onednn
            EXPECT_LT(t.num(i, "max_rel_err"), 1e-4);
        }
    }
    auto r = test::run_cli("report " + all + " --grids-only");
    EXPECT_NE(r.output.find("speed-up of qrnn fo k=2 schedule=tuned over lstm-onednn"), std::string::npos) << r.output;
}

TEST(SweepRuns, ARunTheProcessDiesInIsRetriedOnceThenRecordedAsCrashed) {
    std::string yaml = write_file("crash.yaml", kTinySweep);
    std::string out = test::scratch_path("crash.h5");
    ASSERT_EQ(test::run_cli("sweep " + yaml + " --shard 0/7 -o " + out).exit_code, 0);
    // As left by processes that died: run #1 during its second attempt, run #2 during its first.
    Sweep s = load_sweep(yaml);
    ResultTable t = read_results(out);
    t.append({{"run_id", s.runs[1].id}, {"index", int64_t(1)}, {"status", std::string("running")}, {"attempts", int64_t(2)}});
    t.append({{"run_id", s.runs[2].id}, {"index", int64_t(2)}, {"status", std::string("running")}, {"attempts", int64_t(1)}});
    write_results(out, t);
    auto r = test::run_cli("sweep " + yaml + " -o " + out);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("run #1 batch=2: crashed (the sweep process ended during this run 2 times"), std::string::npos) << r.output;
    t = read_results(out);
    ASSERT_EQ(t.rows(), 7u);
    auto row_of = [&](int run) { return static_cast<size_t>(t.index_of(s.runs[static_cast<size_t>(run)].id)); };
    EXPECT_EQ(t.str(row_of(0), "status"), "ok");
    EXPECT_EQ(t.num(row_of(0), "attempts"), 1);
    EXPECT_EQ(t.str(row_of(1), "status"), "crashed");
    EXPECT_EQ(t.str(row_of(2), "status"), "ok");  // retried
    EXPECT_EQ(t.num(row_of(2), "attempts"), 2);
    r = test::run_cli("sweep " + yaml + " --retry-failed -o " + out);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    t = read_results(out);
    EXPECT_EQ(t.str(row_of(1), "status"), "ok");
    EXPECT_EQ(t.num(row_of(1), "attempts"), 3);
}

TEST(SweepRuns, AGpuTargetWithoutADeviceIsRecordedUnavailable) {
    std::string yaml = write_file("gpu.yaml",
                                  "name: gpu\nbase: {seq: 3, input: 5, hidden: 7, warmup: 0, repeats: 1}\n"
                                  "zip:\n  target: [host, host-cuda]\n  schedule: [tuned, cuda-tiled]\n");
    std::string out = test::scratch_path("gpu.h5");
    auto r = test::run_cli("sweep " + yaml + " -o " + out);
    EXPECT_EQ(r.exit_code, 0) << r.output;  // unavailable is not a failure
    ResultTable t = read_results(out);
    ASSERT_EQ(t.rows(), 2u);
    EXPECT_EQ(t.str(0, "status"), "ok");
    EXPECT_EQ(t.str(1, "target"), "host-cuda");
    if (t.str(1, "status") != "ok") {  // on a machine with a CUDA device the run is measured
        EXPECT_EQ(t.str(1, "status"), "unavailable");
        EXPECT_NE(t.str(1, "error").find("no CUDA device"), std::string::npos) << t.str(1, "error");
    }
    r = test::run_cli("report " + out);
    EXPECT_NE(r.output.find("host-cuda"), std::string::npos) << r.output;
}

TEST(SweepRuns, SecondWriterGetsAClearErrorAndTheFileIsUntouched) {
    std::string yaml = write_file("tiny2.yaml", kTinySweep);
    std::string out = test::scratch_path("locked.h5");
    auto r = test::run_cli("sweep " + yaml + " --shard 0/7 -o " + out);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto bytes = [&] {
        std::ifstream in(out, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    const std::string before = bytes();
    {
        WriterLock held(out);  // this process is "the first writer"
        r = test::run_cli("sweep " + yaml + " -o " + out);
        EXPECT_EQ(r.exit_code, 2);
        EXPECT_NE(r.output.find(out + " is being written by another process (pid " + std::to_string(getpid()) + ","),
                  std::string::npos)
            << r.output;
        r = test::run_cli("merge " + out + " -o " + out + " --force");
        EXPECT_EQ(r.exit_code, 2);
        EXPECT_EQ(bytes(), before);
    }
    r = test::run_cli("sweep " + yaml + " -o " + out);  // lock released
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(read_results(out).rows(), 7u);
    r = test::run_cli("sweep " + yaml + " -o " + yaml);  // not a results file: refused, not overwritten
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find("not an HDF5 file"), std::string::npos) << r.output;
}

TEST(SweepReport, SpeedupGridInThePapersLayoutBesideThePaper) {
    ResultTable t;
    t.attrs["format"] = std::string(kResultsFormat);
    int64_t index = 0;
    for (std::string model : {"qrnn", "lstm-fake"})
        for (int64_t batch : {8, 16})
            for (int64_t seq : {32, 64}) {
                const double ms = model == "qrnn" ? 2.0 : 2.0 * (batch / 4.0) * (seq / 32.0);
                t.append({{"run_id", std::to_string(index)}, {"index", index++}, {"model", model}, {"pooling", std::string("fo")},
                          {"window", int64_t(2)}, {"schedule", std::string("tuned")}, {"batch", batch}, {"seq", seq},
                          {"input", int64_t(320)}, {"hidden", int64_t(320)}, {"layers", int64_t(1)},
                          {"mode", std::string("eval")}, {"status", std::string("ok")}, {"median_ms", ms}});
            }
    std::string out = test::scratch_path("grid.h5");
    write_results(out, t);
    auto r = test::run_cli("report " + out + " --grids-only");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("speed-up of qrnn fo k=2 schedule=tuned over lstm-fake (lstm-fake ms / qrnn ms), "
                            "n=320 m=320 L=1 eval"),
              std::string::npos)
        << r.output;
    // rows batch, columns seq: ours (lstm/qrnn), then the paper's published values.
    EXPECT_NE(r.output.find("        8  2.00  4.00  |          5.5  8.8"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("       16  4.00  8.00  |          5.5  6.7"), std::string::npos) << r.output;
    r = test::run_cli("report " + out + " --grids-only --paper ''");
    EXPECT_EQ(r.output.find("paper:"), std::string::npos) << r.output;
}

// Runs in bf16 (column precision) get their own grid, each precision's QRNN against the baseline in that precision.
TEST(SweepReport, Bf16GridBesideTheF32One) {
    ResultTable t;
    t.attrs["format"] = std::string(kResultsFormat);
    int64_t index = 0;
    for (std::string precision : {"f32", "bf16"})
        for (std::string model : {"qrnn", "lstm-fake"})
            for (int64_t batch : {8, 16})
                for (int64_t seq : {32, 64}) {
                    const double lstm = precision == "bf16" ? 3.0 : 5.0;
                    t.append({{"run_id", std::to_string(index)}, {"index", index++}, {"model", model},
                              {"pooling", std::string("fo")}, {"window", int64_t(2)}, {"schedule", std::string("tuned")},
                              {"batch", batch}, {"seq", seq}, {"input", int64_t(320)}, {"hidden", int64_t(320)},
                              {"layers", int64_t(1)}, {"mode", std::string("eval")}, {"precision", precision},
                              {"status", std::string("ok")}, {"median_ms", model == "qrnn" ? 2.0 : lstm}});
                }
    const std::string out = test::scratch_path("bf16_grid.h5");
    write_results(out, t);
    auto r = test::run_cli("report " + out + " --grids-only");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const std::string title = "speed-up of qrnn fo k=2 schedule=tuned over lstm-fake (lstm-fake ms / qrnn ms), n=320 m=320 L=1 eval";
    const size_t f32 = r.output.find(title + "\n"), bf16 = r.output.find(title + " bf16");
    ASSERT_NE(f32, std::string::npos) << r.output;
    ASSERT_NE(bf16, std::string::npos) << r.output;
    EXPECT_NE(r.output.find("        8  2.50  2.50  |", f32), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("        8  1.50  1.50  |", bf16), std::string::npos) << r.output;
}

// Training-step runs (pass: training) get their own speed-up grid, shown beside the inference grid of the
// same pair (from the same file, or from --inference FILE) and the paper's.
TEST(SweepReport, TrainingGridBesideTheInferenceGridAndThePaper) {
    auto table = [](const std::vector<std::string> &passes) {
        ResultTable t;
        t.attrs["format"] = std::string(kResultsFormat);
        int64_t index = 0;
        for (const std::string &pass : passes)
            for (std::string model : {"qrnn", "lstm-fake"})
                for (int64_t batch : {8, 16})
                    for (int64_t seq : {32, 64}) {
                        const double lstm = pass == "training" ? 3.0 : 2.0 * (batch / 4.0) * (seq / 32.0);
                        t.append({{"run_id", std::to_string(index)}, {"index", index++}, {"model", model},
                                  {"pooling", std::string("fo")}, {"window", int64_t(2)}, {"schedule", std::string("tuned")},
                                  {"batch", batch}, {"seq", seq}, {"input", int64_t(320)}, {"hidden", int64_t(320)},
                                  {"layers", int64_t(1)}, {"mode", std::string("eval")}, {"pass", pass},
                                  {"status", std::string("ok")}, {"median_ms", model == "qrnn" ? 2.0 : lstm}});
                    }
        return t;
    };
    const std::string both = test::scratch_path("both.h5"), training = test::scratch_path("training.h5"),
                      inference = test::scratch_path("inference.h5");
    write_results(both, table({"inference", "training"}));
    write_results(training, table({"training"}));
    write_results(inference, table({"inference"}));
    const std::string title = "speed-up of qrnn fo k=2 schedule=tuned over lstm-fake (lstm-fake ms / qrnn ms), "
                              "n=320 m=320 L=1 eval, training step";
    for (const std::string &args : {both, training + " --inference " + inference}) {
        auto r = test::run_cli("report " + args + " --grids-only");
        EXPECT_EQ(r.exit_code, 0) << r.output;
        const size_t at = r.output.find(title);
        ASSERT_NE(at, std::string::npos) << r.output;
        // Training 1.50 everywhere | the inference grid | the paper's.
        const std::string grid = r.output.substr(at);
        EXPECT_NE(grid.find("        8  1.50  1.50  |              2.00  4.00  |          5.5  8.8"), std::string::npos) << grid;
        EXPECT_NE(grid.find("       16  1.50  1.50  |              4.00  8.00  |          5.5  6.7"), std::string::npos) << grid;
    }
    // Without the inference grid: the training grid beside the paper's only.
    auto r = test::run_cli("report " + training + " --grids-only");
    EXPECT_NE(r.output.find("        8  1.50  1.50  |          5.5  8.8"), std::string::npos) << r.output;
}

// Runs at several widths (input == hidden) get a table by width, each cell under 1.3x marked NO.
TEST(SweepReport, SpeedupsByWidthWithTheTarget) {
    ResultTable t;
    t.attrs["format"] = std::string(kResultsFormat);
    int64_t index = 0;
    for (const std::string pass : {"inference", "training"})
        for (int64_t width : {640, 1550})
            for (std::string model : {"qrnn", "lstm-fake"}) {
                const double lstm = width == 640 ? 2.8 : (pass == "training" ? 2.4 : 3.0);
                t.append({{"run_id", std::to_string(index)}, {"index", index++}, {"model", model}, {"pooling", std::string("fo")},
                          {"window", int64_t(2)}, {"schedule", std::string("tuned")}, {"batch", int64_t(20)},
                          {"seq", int64_t(105)}, {"input", width}, {"hidden", width}, {"layers", int64_t(1)},
                          {"mode", std::string("eval")}, {"pass", pass}, {"status", std::string("ok")},
                          {"median_ms", model == "qrnn" ? 2.0 : lstm}});
            }
    const std::string out = test::scratch_path("widths.h5");
    write_results(out, t);
    auto r = test::run_cli("report " + out + " --grids-only");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const size_t at = r.output.find("speed-up of qrnn fo k=2 schedule=tuned over lstm-fake (lstm-fake ms / qrnn ms) by width, L=1 eval");
    ASSERT_NE(at, std::string::npos) << r.output;
    const std::string table = r.output.substr(at);
    EXPECT_NE(table.find("width  inference B=20 T=105  training B=20 T=105"), std::string::npos) << table;
    EXPECT_NE(table.find("  640                  1.40                 1.40"), std::string::npos) << table;
    EXPECT_NE(table.find(" 1550                  1.50              1.20 NO"), std::string::npos) << table;
    EXPECT_NE(table.find("target >= 1.3x: met in 3 of 4 cells"), std::string::npos) << table;
}

}  // namespace
