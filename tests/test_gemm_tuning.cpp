// The GEMM core's knobs (schedules/gemm_tuning.h): defaults per target, validation of records, the choice of the
// tuning database's best record, trials in scope; and `qrnn autotune --gemm` end to end: its records, then the ops
// (layer forward and training step, checked against the double reference) on the knobs of a database.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "core/error.h"
#include "schedules/cpu_target.h"
#include "schedules/gemm_tuning.h"
#include "schedules/schedule.h"
#include "schedules/training_schedule.h"
#include "schedules/tuning_db.h"
#include "tests/support/cli.h"

namespace qrnn {
namespace {
using test::run_cli;
using test::scratch_path;

const Halide::Target kAvx2("x86-64-linux-avx-avx2-fma-f16c");

// Tiles that fit 16 vector registers, none of them a default.
GemmCoreKnobs odd_knobs(const Halide::Target &target) {
    GemmCoreKnobs k = default_gemm_core_knobs(target);
    k.conv = {2, 5}, k.dweights = {3, 4}, k.dinput = {2, 4};
    k.block_bytes = 512 << 10, k.panel_bytes = 128 << 10;
    return k;
}

TuningRecord gemm_record(const GemmCoreKnobs &k, double score, const std::string &target, const LayerShape &shape) {
    TuningRecord r;
    r.cpu = tuning_cpu_name();
    r.pooling = "fo";
    r.target = target;
    r.shape = shape;
    r.schedule = kGemmCoreSchedule;
    r.knobs = k.knobs();
    r.status = "ok";
    r.median_ms = 1;
    r.score = score;
    return r;
}

TEST(GemmTuning, DefaultsFollowTheTargetsRegistersAndCaches) {
    const GemmCoreKnobs avx2 = default_gemm_core_knobs(kAvx2);
    EXPECT_EQ(avx2.conv, (GemmTile{2, 6}));
    EXPECT_EQ(avx2.dweights, (GemmTile{2, 6}));
    EXPECT_EQ(avx2.dinput, (GemmTile{3, 4}));
    EXPECT_EQ(avx2.block_bytes, 2 * cpu_traits(kAvx2).l2_bytes);
    EXPECT_EQ(avx2.panel_bytes, cpu_traits(kAvx2).l2_bytes / 2);
    const Halide::Target avx512("x86-64-linux-avx-avx2-fma-f16c-avx512");
    EXPECT_EQ(default_gemm_core_knobs(avx512).conv, (GemmTile{4, 6}));
    EXPECT_EQ(default_gemm_core_knobs(avx512).dinput, (GemmTile{5, 5}));
    // Every default is valid for its target and survives the record's knobs.
    for (const Halide::Target &t : {kAvx2, avx512, Halide::Target("x86-64-linux-sse41")})
        EXPECT_EQ(gemm_core_knobs_from(default_gemm_core_knobs(t).knobs(), t), default_gemm_core_knobs(t)) << t.to_string();
}

TEST(GemmTuning, RecordsOutsideTheRangesOrRegistersAreRefused) {
    auto problem = [](Knobs k, const Halide::Target &t) -> std::string {
        try {
            gemm_core_knobs_from(k, t);
        } catch (const Error &e) {
            return e.what();
        }
        return "";
    };
    const Knobs good = default_gemm_core_knobs(kAvx2).knobs();
    EXPECT_EQ(problem(good, kAvx2), "");
    Knobs k = good;
    k.erase("tile_c");
    EXPECT_NE(problem(k, kAvx2).find("'tile_c' is missing"), std::string::npos);
    k = good, k["tile_t"] = 17;
    EXPECT_NE(problem(k, kAvx2).find("'tile_t' = 17 is outside [1, 16]"), std::string::npos);
    k = good, k["tile_h_vectors"] = 4, k["tile_t"] = 6;  // 24 accumulators: AVX-512's tile, not AVX2's
    EXPECT_NE(problem(k, kAvx2).find("needs more than the 16 vector registers"), std::string::npos) << problem(k, kAvx2);
    EXPECT_EQ(problem(k, Halide::Target("x86-64-linux-avx-avx2-fma-f16c-avx512")), "");
    k = good, k["block_kib"] = 8;
    EXPECT_NE(problem(k, kAvx2).find("'block_kib' = 8"), std::string::npos);
    // The database's check says the same, and a layer's tuned-db never takes a gemm-core record.
    TuningRecord r = gemm_record(default_gemm_core_knobs(kAvx2), 0.9, tuning_target_name(kAvx2), {9, 3, 37, 37, 2});
    EXPECT_EQ(tuning_record_problem(r), "");
    r.knobs["tile_t"] = 17;
    EXPECT_NE(tuning_record_problem(r).find("tile_t"), std::string::npos);
    EXPECT_FALSE(best_tuning_record({gemm_record(default_gemm_core_knobs(kAvx2), 0.9, "x", {9, 3, 37, 37, 2})}, "fo", "x",
                                    {9, 3, 37, 37, 2}, tuning_cpu_name()));
}

TEST(GemmTuning, BestRecordIsTheHighestScoreAtTheNewestShape) {
    const GemmCoreKnobs d = default_gemm_core_knobs(kAvx2), odd = odd_knobs(kAvx2);
    const std::string target = tuning_target_name(kAvx2);
    const LayerShape old_shape{105, 20, 640, 640, 2}, shape{105, 20, 1024, 1024, 2};
    std::vector<TuningRecord> records{gemm_record(odd, 1.5, target, old_shape), gemm_record(d, 0.95, target, shape),
                                      gemm_record(odd, 0.97, target, shape), gemm_record(d, 0.99, target, shape)};
    records[3].status = "wrong";
    records.push_back(gemm_record(d, 3.0, "another-target", shape));
    records.push_back(gemm_record(d, 3.0, target, shape));
    records.back().cpu = "another CPU";
    std::optional<TuningRecord> best = best_gemm_core_record(records, target, tuning_cpu_name());
    ASSERT_TRUE(best);
    EXPECT_EQ(best->score, 0.97);
    EXPECT_EQ(gemm_core_knobs_from(best->knobs, kAvx2), odd);
    EXPECT_FALSE(best_gemm_core_record(records, "nothing", tuning_cpu_name()));
    // Knobs beat the defaults only by more than the noise: a second trial of odd at 0.93 makes its mean 0.95.
    records.push_back(gemm_record(odd, 0.93, target, shape));
    best = best_gemm_core_record(records, target, tuning_cpu_name());
    EXPECT_EQ(gemm_core_knobs_from(best->knobs, kAvx2), d);
    EXPECT_EQ(best->score, 0.95);
    records.push_back(gemm_record(odd, 1.06, target, shape));  // odd's mean 0.9867: more than 1% above
    EXPECT_EQ(gemm_core_knobs_from(best_gemm_core_record(records, target, tuning_cpu_name())->knobs, kAvx2), odd);
    // The score survives a JSON line.
    const std::string path = scratch_path("gemm_core.jsonl");
    append_tuning_record(path, records[2]);  // odd at 0.97
    EXPECT_EQ(read_tuning_records(path).at(0).score, 0.97);
    // The core reads only its own lines: another schedule's, even malformed, is not parsed.
    TuningRecord layer = records[2];
    layer.schedule = "tuned";
    append_tuning_record(path, layer);
    std::ofstream(path, std::ios::app) << "{\"schedule\":\"tuned\", not json\n";
    EXPECT_THROW(read_tuning_records(path), Error);
    const std::vector<TuningRecord> core = read_tuning_records(path, kGemmCoreSchedule);
    ASSERT_EQ(core.size(), 1u);
    EXPECT_EQ(core[0].line, 1);
}

TEST(GemmTuning, ATrialsKnobsAreEveryOpsDefaultsWhileItLasts) {
    const GemmCoreKnobs before = gemm_core_knobs(kAvx2), odd = odd_knobs(kAvx2);
    {
        GemmCoreTrial trial(kAvx2, odd);
        EXPECT_EQ(gemm_core_knobs(kAvx2), odd);
        EXPECT_EQ(core_tile_for(kAvx2), odd.conv);
        const Knobs training = merge_knobs(find_training_schedule("tuned"), {}, kAvx2);
        EXPECT_EQ(training.at("tile_t"), 5);
        EXPECT_EQ(training.at("dw_h_vectors"), 3);
        EXPECT_EQ(training.at("dx_tile_t"), 4);
        EXPECT_EQ(default_knobs(find_layer_schedule("tuned"), kAvx2).at("tile_h_vectors"), 2);
    }
    EXPECT_EQ(gemm_core_knobs(kAvx2), before);
}

// A short search writes verified records; a database whose best record has other tiles and blocks is what the
// commands then use (qrnn schedules names it) and the ops stay correct; QRNN_GEMM_TUNING=defaults ignores it.
TEST(GemmTuning, AutotuneGemmThenEveryOpUsesTheDatabase) {
    unsetenv("QRNN_GEMM_TUNING");  // (the tests' environment sets it)
    const std::string db = scratch_path("gemm_tuning.jsonl");
    auto r = run_cli("autotune --gemm --gemm-widths 37 --seq 9 --batch 3 --trials 3 --repeats 1 --db " + db);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("3 trials appended"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("ETA"), std::string::npos) << r.output;
    std::vector<TuningRecord> records = read_tuning_records(db);
    ASSERT_EQ(records.size(), 3u);
    const Halide::Target host = Halide::get_jit_target_from_environment();
    EXPECT_EQ(gemm_core_knobs_from(records[0].knobs, host), default_gemm_core_knobs(host));  // the defaults first
    for (const TuningRecord &rec : records) {
        EXPECT_EQ(rec.schedule, kGemmCoreSchedule);
        EXPECT_EQ(rec.status, "ok") << rec.error;
        EXPECT_GT(rec.score, 0);
        EXPECT_LT(rec.rel_error, 1e-4);
        EXPECT_EQ(rec.shape.key(), "T=9,B=3,n=37,m=37,k=2");
        EXPECT_EQ(tuning_record_problem(rec), "");
    }

    append_tuning_record(db, gemm_record(odd_knobs(host), 100, tuning_target_name(host), records[0].shape));
    setenv("QRNN_TUNING_DB", db.c_str(), 1);
    r = run_cli("schedules");
    EXPECT_NE(r.output.find("conv 2x5, dW 3x4, dX 2x4, blocks 512K / 128K (tuned: " + db + " line 4)"), std::string::npos)
        << r.output;
    // Odd widths; T = 1, B = 1 with k > T.
    for (const std::string layer : {" --pooling fo --batch 3 --seq 11 --input 37 --hidden 29 --window 2",
                                     " --pooling ifo --batch 1 --seq 1 --input 5 --hidden 7 --window 3"})
        for (const std::string pass : {"inference", "training"}) {
            r = run_cli("run" + layer + " --verify --pass " + pass);
            EXPECT_EQ(r.exit_code, 0) << layer << " " << pass << "\n" << r.output;
        }
    setenv("QRNN_GEMM_TUNING", "defaults", 1);
    r = run_cli("schedules");
    EXPECT_NE(r.output.find("(defaults)"), std::string::npos) << r.output;
    unsetenv("QRNN_TUNING_DB");
}

}  // namespace
}  // namespace qrnn
