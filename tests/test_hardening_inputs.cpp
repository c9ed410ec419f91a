// Regressions of issue #13 (a hostile user's inputs), items 1-3 and 6: knob ranges, the memory guard,
// tuned-db records. Each reproduces the reported failure through the CLI and checks the clear one-line
// error and exit code that replaced it. Items 4, 5 and 7: test_hardening_files.cpp.
#include <gtest/gtest.h>

#include <cstdlib>

#include "schedules/tuning_db.h"
#include "tests/support/cli.h"

namespace qrnn::test {
namespace {

const std::string kTiny = " --batch 2 --seq 4 --input 8 --hidden 8 --warmup 0 --repeats 1";

// 1, 2: knobs outside their range (chunk=0 gave all-zero output; tile_t=100000 crashed Halide's simplifier;
// 99999999999 did not fit an int and compiled for minutes).
TEST(Hardening, KnobsOutsideTheirRangeAreErrors) {
    expect_cli("run --schedule fused --knob chunk=0" + kTiny, 2, "schedule 'fused': knob 'chunk' = 0 is outside [1, 4096]");
    expect_cli("run --schedule tuned --knob tile_t=100000" + kTiny, 2, "knob 'tile_t' = 100000 is outside [1, 16]");
    expect_cli("run --schedule tuned --knob tile_h_vectors=1000" + kTiny, 2, "knob 'tile_h_vectors' = 1000 is outside [1, 5]");
    expect_cli("run --schedule tuned --knob chains=99999999999" + kTiny, 2, "knob 'chains' = 99999999999 is out of range");
    expect_cli("run --schedule tuned --knob chains=1,2" + kTiny, 2, "--knob: 'chains=1,2' gives more than one value");
    // --dry-run validates the same way and runs nothing.
    expect_cli("run --dry-run --schedule fused --knob chunk=0" + kTiny, 2, "knob 'chunk' = 0 is outside [1, 4096]");
    expect_cli("run --dry-run --schedule fused --knob chunk=4096 --pooling f,fo" + kTiny, 0, "2 configurations valid; nothing run");
    // The smallest valid chunk is correct, not zeros.
    expect_cli("run --schedule fused --knob chunk=1 --verify" + kTiny, 0, "verify: all within");
}

TEST(Hardening, SweepDryRunChecksKnobRanges) {
    std::string yaml = write_scratch("knob.yaml", "name: k\nbase: {batch: 2, seq: 4, input: 8, hidden: 8}\ngrid:\n  knob.tile_t: [8, 100000]\n");
    expect_cli("sweep " + yaml + " --dry-run", 2, "knob.yaml:4:20: key 'knob.tile_t'");
    expect_cli("sweep " + yaml + " --dry-run", 2, "knob 'tile_t' = 100000 is outside [1, 16]");
}

// 3: the memory guard refuses before allocating (these were OOM-killed after a minute at ~23 GB).
TEST(Hardening, MemoryGuardRefusesHugeRuns) {
    expect_cli("run --window 1000000000 --batch 1 --seq 1 --input 1 --hidden 1", 2, "above the memory limit");
    expect_cli("run --layers 1000 --batch 1 --seq 1 --input 1 --hidden 100000", 2, "above the memory limit");
    expect_cli("run --layers 1000000000 --batch 1 --seq 1 --input 1 --hidden 1", 2, "--layers must be <= 1024 (got 1000000000)");
    expect_cli("run --max-memory 1M --batch 64 --seq 256", 2, "B=64 T=256 n=320 m=320 L=1 schedule=tuned mode=eval seed=1: needs about 227 MiB");
    expect_cli("run --max-memory 1M --batch 64 --seq 256", 2, "above the memory limit 1 MiB (--max-memory");
    // A training step also holds the tape, the gates' gradients, dh, dx and the parameters' gradients.
    expect_cli("run --pass training --max-memory 1M --batch 64 --seq 256", 2, "needs about 433 MiB");
    expect_cli("run --max-memory lots" + kTiny, 2, "--max-memory: 'lots' is not a memory size");
    expect_cli("run --max-memory 64M" + kTiny, 0, "qrnn");
}

// 6: tuned-db trusted its records: one naming tuned-db recursed until SIGSEGV, one with tile_t=100000 crashed.
TEST(Hardening, TunedDbSkipsBadRecordsWithAWarning) {
    const std::string target = tuning_target_name(Halide::get_jit_target_from_environment());
    auto record = [&](const std::string &schedule, const std::string &knobs) {
        return "{\"version\":1,\"pooling\":\"fo\",\"target\":\"" + target +
               "\",\"shape\":{\"T\":4,\"B\":2,\"n\":8,\"m\":8,\"k\":2},\"schedule\":\"" + schedule + "\",\"knobs\":{" + knobs +
               "},\"status\":\"ok\",\"median_ms\":0.01}\n";
    };
    std::string db = write_scratch("bad.jsonl", record("tuned-db", "") + record("tuned", "\"tile_t\":100000") +
                                                 "not json\n" + record("warp-drive", ""));
    setenv("QRNN_TUNING_DB", db.c_str(), 1);
    CliResult r = run_cli("run --schedule tuned-db --verify" + kTiny);
    unsetenv("QRNN_TUNING_DB");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    for (const char *want : {"line 1 skipped: schedule 'tuned-db' would use the database recursively",
                             "line 2 skipped: schedule 'tuned': knob 'tile_t' = 100000 is outside [1, 16]",
                             "line 3 skipped: malformed record", "line 4 skipped: unknown schedule 'warp-drive'",
                             "using 'tuned'", "verify: all within"})
        EXPECT_NE(r.output.find(want), std::string::npos) << want << "\n" << r.output;
}

}  // namespace
}  // namespace qrnn::test
