// qrnn autotune / tuning database / tuned-db, qrnn schedules, and the GPU target errors, through the CLI.
#include <gtest/gtest.h>

#include <fstream>

#include "harness/autotuner.h"
#include "schedules/tuning_db.h"
#include "tests/support/cli.h"

namespace qrnn {
namespace {
using test::run_cli;
using test::scratch_path;

const std::string kShape = "--pooling ifo --batch 2 --seq 19 --input 9 --hidden 21 --window 3";

size_t line_count(const std::string &path) {
    std::ifstream f(path);
    size_t n = 0;
    for (std::string line; std::getline(f, line);) n++;
    return n;
}

TEST(Autotune, TinyBudgetRecordsEveryTrialAndTunedDbUsesTheBest) {
    std::string db = scratch_path("tuning.jsonl");
    auto r = run_cli("autotune " + kShape + " --trials 4 --repeats 2 --prune 0 --schedules tuned,chunked-scan --db " + db);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("4 trials appended"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("ETA"), std::string::npos) << r.output;
    std::vector<TuningRecord> records = read_tuning_records(db);
    ASSERT_EQ(records.size(), 4u);
    EXPECT_EQ(records[0].schedule, "tuned");  // defaults first
    EXPECT_EQ(records[1].schedule, "chunked-scan");
    for (auto &rec : records) {
        EXPECT_EQ(rec.status, "ok") << rec.error;
        EXPECT_EQ(rec.shape.key(), "T=19,B=2,n=9,m=21,k=3");
        EXPECT_GT(rec.median_ms, 0);
        EXPECT_LT(rec.rel_error, 1e-4);
    }
    // tuned-db, verified, from the database of this test.
    auto run = run_cli("run " + kShape + " --schedule tuned-db --verify");
    EXPECT_EQ(run.exit_code, 0) << run.output;  // no DB in the cwd: falls back to tuned, with a note
    EXPECT_NE(run.output.find("using 'tuned'"), std::string::npos) << run.output;
    setenv("QRNN_TUNING_DB", db.c_str(), 1);
    run = run_cli("run --pooling ifo --batch 2 --seq 40 --input 9 --hidden 21 --window 3 --schedule tuned-db --verify");
    unsetenv("QRNN_TUNING_DB");
    EXPECT_EQ(run.exit_code, 0) << run.output;  // nearest shape: T=19
    EXPECT_NE(run.output.find("tuned-db: using"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("T=19,B=2,n=9,m=21,k=3"), std::string::npos) << run.output;
}

TEST(Autotune, SweepTunesEveryQrnnShapeWithCandidatesCompiledOnce) {
    std::string db = scratch_path("sweep_tuning.jsonl"), yaml = scratch_path("tune.yaml");
    std::ofstream(yaml) << "name: t\nbase: {pooling: fo, window: 2, input: 9, hidden: 21, batch: 2}\n"
                           "grid: {seq: [7, 19], model: [qrnn, lstm-onednn]}\n";
    auto r = run_cli("autotune --sweep " + yaml + " --trials 2 --repeats 1 --prune 0 --schedules tuned --db " + db);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("4 trials over 2 shapes"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("shape 2/2"), std::string::npos) << r.output;
    auto records = read_tuning_records(db);
    ASSERT_EQ(records.size(), 4u);
    EXPECT_EQ(records[0].shape.key(), "T=7,B=2,n=9,m=21,k=2");
    EXPECT_EQ(records[2].shape.key(), "T=19,B=2,n=9,m=21,k=2");
    EXPECT_EQ(records[0].knobs, records[2].knobs);  // same candidates in the same order for every shape
    EXPECT_EQ(records[0].cpu, tuning_cpu_name());
    r = run_cli("autotune --sweep " + scratch_path("missing.yaml") + " --trials 1");
    EXPECT_EQ(r.exit_code, 2) << r.output;
}

TEST(Autotune, PrunedTrialIsTimedOnceAndNeverUsed) {
    ModelConfig cfg = layer_config("fo", {9, 2, 5, 7, 2});
    TrialRunner runner(cfg, "", 0, 5, 1e-4);
    CandidateGenerator generator({"tuned"}, 1);
    TuningRecord r = runner.run(*generator.next(), 0.0);
    EXPECT_EQ(r.status, "pruned") << r.error;
    EXPECT_EQ(r.repeats, 1);
    EXPECT_FALSE(best_tuning_record({r}, "fo", r.target, r.shape));
    r = runner.run(*generator.next());
    EXPECT_EQ(r.status, "ok") << r.error;
    EXPECT_EQ(r.repeats, 5);
}

TEST(Autotune, SigintKeepsWhatWasMeasured) {
    std::string db = scratch_path("interrupted.jsonl");
    // Background jobs of sh ignore SIGINT by default; autotune installs its own handler anyway.
    auto r = run_cli("autotune " + kShape + " --trials 200 --repeats 1 --schedules tuned,fused,chunked-scan --db " + db +
                     " & pid=$!; sleep 8; kill -INT $pid; wait $pid");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("interrupted"), std::string::npos) << r.output;
    size_t lines = line_count(db);
    EXPECT_GE(lines, 1u) << r.output;
    EXPECT_LT(lines, 200u);
    EXPECT_EQ(read_tuning_records(db).size(), lines);
}

TEST(Autotune, BadInputIsAClearError) {
    auto r = run_cli("autotune " + kShape);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find("give a budget"), std::string::npos) << r.output;
    r = run_cli("autotune " + kShape + " --trials 1 --schedules tuned,nope");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find("unknown schedule 'nope'"), std::string::npos) << r.output;
    std::string db = scratch_path("bad.jsonl");
    std::ofstream(db) << "{\"pooling\":\"fo\"}\n";
    r = run_cli("autotune " + kShape + " --trials 1 --db " + db);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find(db + " line 1"), std::string::npos) << r.output;
}

TEST(TuningDb, NearestShapeThenFastest) {
    auto rec = [](int64_t T, int64_t B, const char *schedule, double ms, const char *status = "ok") {
        TuningRecord r;
        r.pooling = "fo";
        r.target = "x";
        r.cpu = "c";
        r.schedule = schedule;
        r.status = status;
        r.shape = {T, B, 320, 320, 2};
        r.median_ms = ms;
        return r;
    };
    std::vector<TuningRecord> records{rec(128, 16, "tuned", 5), rec(128, 16, "fused", 4), rec(128, 16, "naive", 1, "wrong"),
                                      rec(4096, 1, "chunked-scan", 9)};
    EXPECT_EQ(best_tuning_record(records, "fo", "x", {100, 20, 320, 320, 2}, "c")->schedule, "fused");
    EXPECT_EQ(best_tuning_record(records, "fo", "x", {8192, 1, 320, 320, 2}, "c")->schedule, "chunked-scan");
    EXPECT_FALSE(best_tuning_record(records, "ifo", "x", {128, 16, 320, 320, 2}, "c"));
    // Another CPU model's tuning is not this machine's, even with the same target string.
    records.push_back(rec(100, 20, "naive", 0.5));
    records.back().cpu = "other";
    EXPECT_EQ(best_tuning_record(records, "fo", "x", {100, 20, 320, 320, 2}, "c")->schedule, "fused");
    EXPECT_FALSE(best_tuning_record(records, "fo", "x", {100, 20, 320, 320, 2}, "nobody"));
    // Round trip through a JSON line.
    std::string path = scratch_path("roundtrip.jsonl");
    TuningRecord r = rec(7, 3, "tuned", 1.5);
    r.knobs = {{"tile_t", 6}};
    r.error = "quote \" and\nnewline";
    append_tuning_record(path, r);
    auto back = read_tuning_records(path);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].knobs, r.knobs);
    EXPECT_EQ(back[0].error, r.error);
    EXPECT_EQ(back[0].shape.key(), r.shape.key());
    EXPECT_EQ(back[0].cpu, r.cpu);
}

TEST(SchedulesCli, ListsEveryScheduleWithKnobs) {
    auto r = run_cli("schedules");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    for (const char *name : {"naive", "tuned", "fused", "chunked-scan", "auto-Adams2019", "auto-Li2018",
                             "auto-Mullapudi2016", "tuned-db", "cuda-tiled", "cuda-fused", "cuda-auto-Li2018", "tile_t", "chunk"})
        EXPECT_NE(r.output.find(name), std::string::npos) << name;
}

TEST(SchedulesCli, CudaTargetWithoutGpuIsAClearError) {
    auto r = run_cli("run --target host-cuda --schedule cuda-tiled --seq 4 --batch 1");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find("no CUDA device"), std::string::npos) << r.output;
    r = run_cli("run --target host --schedule cuda-tiled --seq 4 --batch 1");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find("is for gpu targets"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace qrnn

namespace qrnn {
namespace {
TEST(BenchCli, RunsAndChecksItsKernelsAgainstEachOther) {
    // Timing is not checked (benchmarks never decide pass/fail); the command must run, compare its GEMM with
    // OpenBLAS and its chunked scan with the serial one, and print the ratio table.
    std::string json = test::scratch_path("bench.json");
    auto r = test::run_cli("bench --quick --repeats 1 --what gemm --json " + json);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    std::ifstream f(json);
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("\"benchmarks\":["), std::string::npos) << text;
    EXPECT_NE(text.find("\"ratio\":"), std::string::npos) << text;
    EXPECT_NE(text.find("\"ratio_q1\":"), std::string::npos) << "per-round ratios, with quartiles: " << text;
    EXPECT_NE(r.output.find("conv GEMM vs best sgemm"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("dnnl_sgemm"), std::string::npos) << r.output;
    EXPECT_NE(text.find("\"cpu_isa\":"), std::string::npos) << text;
    // The AVX2 path on any newer CPU, references held to AVX2 (never an ISA the CPU lacks).
    r = test::run_cli("bench --quick --repeats 1 --what gemm --target x86-64-linux-avx-avx2-fma-f16c");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("avx2"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("SkylakeX"), std::string::npos) << r.output;
    r = test::run_cli("bench --what nope");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find("unknown section 'nope'"), std::string::npos) << r.output;
}
}  // namespace
}  // namespace qrnn
