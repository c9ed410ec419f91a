// Every CPU schedule x pooling x awkward shape against the double reference (runtime/experiment verify).
#include <gtest/gtest.h>

#include <tuple>

#include "core/error.h"
#include "harness/autotuner.h"
#include "harness/experiment.h"
#include "schedules/cpu_common.h"
#include "schedules/cpu_target.h"
#include "schedules/schedule.h"
#include "schedules/training_schedule.h"
#include "tests/support/param_name.h"

namespace qrnn {
namespace {

struct Shape {
    int64_t T, B, n, m, k;
};
// T = 1, B = 1, widths off the vector size, k > T, T off the chunk lengths; m = 64, which every target's h tile
// divides: tuned's conv reads the weights in place there, through the clamped copy at the other widths.
const Shape kAwkward[] = {{1, 1, 5, 7, 1}, {3, 2, 9, 23, 4}, {37, 1, 17, 33, 2}, {70, 3, 16, 16, 3}, {5, 2, 9, 64, 2}};

double verified_error(const std::string &schedule, const std::string &pooling, const Shape &s, const Knobs &knobs = {},
                      bool training = false, const std::string &target = "") {
    ModelConfig cfg = layer_config(pooling, {s.T, s.B, s.n, s.m, s.k});
    cfg.schedule = schedule;
    cfg.target = target;
    if (training) {
        cfg.stochastic = true;
        cfg.layers = 2;
        cfg.zoneout = 0.3;
        cfg.dropout = 0.2;
    }
    RunOptions opts;
    opts.warmup = 0;
    opts.repeats = 1;
    opts.verify = true;
    opts.knobs = knobs;
    RunReport r = run_experiment(cfg, opts);
    EXPECT_TRUE(r.error->finite);
    return r.error->rel();
}

class HandWritten : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(HandWritten, MatchesReferenceOnAwkwardShapes) {
    auto [schedule, pooling] = GetParam();
    for (const Shape &s : kAwkward)
        EXPECT_LT(verified_error(schedule, pooling, s), 1e-4)
            << schedule << " " << pooling << " T=" << s.T << " B=" << s.B << " n=" << s.n << " m=" << s.m << " k=" << s.k;
}

INSTANTIATE_TEST_SUITE_P(Cpu, HandWritten,
                         ::testing::Combine(::testing::Values("naive", "tuned", "fused", "chunked-scan"),
                                            ::testing::Values("f", "fo", "ifo")),
                         [](const auto &info) { return test::gtest_name(std::get<0>(info.param) + "_" + std::get<1>(info.param)); });

// Every ISA path this CPU can run below its own (SSE4.1, and AVX2 on an AVX-512 machine; the host target is
// HandWritten's), each with its target-aware defaults: an ISA bug (a tile that only works for one vector width)
// shows on any machine.
class LowerTargets : public ::testing::TestWithParam<std::string> {};

TEST_P(LowerTargets, EveryCpuScheduleMatchesReference) {
    for (const Halide::Target &target : runnable_cpu_targets()) {
        if (target_isa(target) == target_isa(Halide::get_host_target())) continue;
        const std::string name = target.to_string();
        for (const Shape &s : kAwkward)
            EXPECT_LT(verified_error(GetParam(), "ifo", s, {}, false, name), 1e-4)
                << GetParam() << " " << name << " T=" << s.T << " B=" << s.B << " n=" << s.n << " m=" << s.m << " k=" << s.k;
        EXPECT_LT(verified_error(GetParam(), "fo", {37, 2, 9, 23, 2}, {}, true, name), 1e-4) << GetParam() << " " << name;
    }
}

INSTANTIATE_TEST_SUITE_P(Cpu, LowerTargets, ::testing::Values("tuned", "fused", "chunked-scan"), test::param_name);

TEST(CpuTargets, RunnableTargetsAndTilesFollowTheIsa) {
    auto targets = runnable_cpu_targets();
    ASSERT_GE(targets.size(), 2u) << "an x86-64 CI machine runs at least SSE4.1 and AVX2";
    EXPECT_EQ(target_isa(targets[0]), "sse4.1");
    EXPECT_EQ(target_isa(targets[1]), "avx2");
    for (auto &t : targets) EXPECT_TRUE(cpu_runs(t)) << t.to_string();
    // Accumulators + tile_h_vectors weight vectors + 1 broadcast fit the target's registers.
    for (const char *name : {"x86-64-linux-sse41", "x86-64-linux-avx-avx2-fma-f16c", "x86-64-linux-avx-avx2-fma-f16c-avx512"}) {
        Halide::Target t(name);
        for (GemmTile tile : {gemm_tile_for(t), core_tile_for(t)})
            EXPECT_LE(tile.h_vectors * tile.t + tile.h_vectors + 1, cpu_traits(t).vector_registers) << name;
        EXPECT_EQ(default_knobs(find_layer_schedule("tuned"), t).at("tile_t"), core_tile_for(t).t) << name;
        EXPECT_EQ(default_knobs(find_layer_schedule("fused"), t).at("tile_t"), gemm_tile_for(t).t) << name;
    }
    EXPECT_EQ(cpu_traits(Halide::Target("x86-64-linux-avx-avx2-fma-f16c")).vector_registers, 16);
    EXPECT_EQ(cpu_traits(Halide::Target("x86-64-linux-avx-avx2-fma-f16c-avx512")).vector_registers, 32);
    EXPECT_EQ(gemm_tile_for(Halide::Target("x86-64-linux-avx-avx2-fma-f16c")).t, 6);
}

TEST(CpuTargets, TileForWidthFollowsTheWidth) {
    const Halide::Target avx512("x86-64-linux-avx-avx2-fma-f16c-avx512"), avx2("x86-64-linux-avx-avx2-fma-f16c");
    auto tile = [](int64_t m, GemmTile preferred, const Halide::Target &t) {
        GemmTile g = tile_for_width(m, preferred, t);
        return std::make_pair(g.h_vectors, g.t);
    };
    EXPECT_EQ(tile(77, {2, 8}, avx512), std::make_pair(5, 4));   // 5 vectors: 80 rows, not 96
    EXPECT_EQ(tile(77, {4, 4}, avx512), std::make_pair(5, 4));   // not 128
    EXPECT_EQ(tile(33, {2, 8}, avx512), std::make_pair(3, 6));   // 3 vectors
    EXPECT_EQ(tile(5, {2, 8}, avx512), std::make_pair(1, 8));    // 1 vector
    EXPECT_EQ(tile(320, {2, 8}, avx512), std::make_pair(2, 8));  // 20 vectors: the preferred tile pads nothing
    EXPECT_EQ(tile(320, {4, 4}, avx512), std::make_pair(4, 4));
    EXPECT_EQ(tile(77, {2, 6}, avx2), std::make_pair(2, 6));     // 10 vectors of 8
    EXPECT_EQ(tile(72, {2, 6}, avx2), std::make_pair(3, 4));     // 9 vectors: 3 x 4 (12 accumulators)
    EXPECT_EQ(tile(0, {2, 8}, avx512), std::make_pair(2, 8));    // no width known
    // 157 vectors: 1 x 8 would pad nothing but load once per FMA (dW's 1 x 4 took 1.6x the time of 4 x 4).
    EXPECT_EQ(tile(2500, {2, 8}, avx512), std::make_pair(2, 8));
    EXPECT_EQ(tile(2500, {4, 4}, avx512), std::make_pair(4, 4));
    EXPECT_EQ(tile(1550, {4, 4}, avx512), std::make_pair(4, 4));  // 3 x 4 pads 1% less: not worth it
    EXPECT_EQ(tile(2500, {2, 6}, avx2), std::make_pair(2, 6));
    // The GEMM core's 4 x 6 at the LM widths; at 1550 (97 vectors) 2 x 6 pads to 98 and ties within the margin.
    EXPECT_EQ(tile(1550, {4, 6}, avx512), std::make_pair(4, 6));
    EXPECT_EQ(tile(2500, {4, 6}, avx512), std::make_pair(4, 6));
}

// The tuned training schedule's knobs for a width: the forward's and dW's tiles from tile_for_width, within
// their ranges; the target's elsewhere; a given knob over them; a height past the range refused.
TEST(CpuTargets, TrainingKnobsFollowTheWidth) {
    const Halide::Target avx512("x86-64-linux-avx-avx2-fma-f16c-avx512"), avx2("x86-64-linux-avx-avx2-fma-f16c");
    const TrainingSchedule &tuned = find_training_schedule("tuned");
    Knobs k = merge_knobs_for_width(tuned, {}, 77, avx512);
    EXPECT_EQ(k.at("tile_h_vectors"), 5);
    EXPECT_EQ(k.at("tile_t"), 4);
    EXPECT_EQ(k.at("dw_h_vectors"), 5);
    EXPECT_EQ(k.at("tile_c"), 4);
    EXPECT_EQ(merge_knobs_for_width(tuned, {}, 320, avx512), merge_knobs(tuned, {}, avx512));
    EXPECT_EQ(merge_knobs_for_width(tuned, {}, 77, avx2), merge_knobs(tuned, {}, avx2));  // 10 vectors of 8
    EXPECT_EQ(merge_knobs_for_width(tuned, {}, 72, avx2).at("dw_h_vectors"), 3);        // 9 vectors
    EXPECT_EQ(merge_knobs_for_width(tuned, {{"dw_h_vectors", 2}}, 77, avx512).at("dw_h_vectors"), 2);
    EXPECT_THROW(merge_knobs_for_width(tuned, {{"dw_h_vectors", 6}}, 77, avx512), Error);
}

// The training schedule's dX tile (default_gemm_core_knobs, schedules/gemm_tuning.cpp) is the target's: tall in c, its
// accumulators, weight vectors and a broadcast within the registers (AVX2's 4 x 3 spilled: dX at half speed).
TEST(CpuTargets, DinputTileFollowsTheIsa) {
    for (auto [name, c_vectors, steps] : {std::tuple{"x86-64-linux-avx-avx2-fma-f16c", 3, 4},
                                          std::tuple{"x86-64-linux-avx-avx2-fma-f16c-avx512", 5, 5}}) {
        Halide::Target t(name);
        Knobs k = merge_knobs(find_training_schedule("tuned"), {}, t);
        EXPECT_EQ(k.at("dx_c_vectors"), c_vectors) << name;
        EXPECT_EQ(k.at("dx_tile_t"), steps) << name;
        EXPECT_LE(k.at("dx_c_vectors") * (k.at("dx_tile_t") + 1) + 1, cpu_traits(t).vector_registers) << name;
    }
}

TEST(Schedules, TrainingMasksAndStacking) {
    for (const char *schedule : {"tuned", "fused", "chunked-scan"})
        EXPECT_LT(verified_error(schedule, "fo", {37, 2, 9, 23, 2}, {}, true), 1e-4) << schedule;
}

TEST(Schedules, NonDefaultKnobs) {
    EXPECT_LT(verified_error("tuned", "ifo", {37, 2, 9, 50, 2}, {{"chains", 2}, {"tile_t", 6}, {"tile_h_vectors", 1}}), 1e-4);
    EXPECT_LT(verified_error("fused", "fo", {37, 2, 9, 50, 3}, {{"chunk", 8}, {"tile_h_vectors", 2}, {"b_inner", 0}}), 1e-4);
    EXPECT_LT(verified_error("chunked-scan", "f", {100, 1, 9, 40, 2}, {{"chunk", 16}, {"chains", 4}}), 1e-4);
}

TEST(Schedules, GemmCoreBlocksLongReductions) {
    // n k = 8997 reduction steps: the conv's weight panels are split into K blocks (schedules/gemm_core.cpp) on
    // AVX-512 and AVX2, the last block shorter than the others.
    for (const Halide::Target &target : runnable_cpu_targets())
        EXPECT_LT(verified_error("tuned", "fo", {3, 2, 2999, 45, 3}, {}, false, target.to_string()), 1e-4) << target.to_string();
}

TEST(Schedules, ChunkedScanLongSequenceSmallBatch) {
    // Many chunks, a partial tail chunk and a decaying carry: the two-level scan must equal the serial one.
    EXPECT_LT(verified_error("chunked-scan", "ifo", {1000, 1, 8, 20, 2}, {{"chunk", 32}}), 1e-4);
}

TEST(Schedules, Autoschedulers) {
    // Compiled per shape; the slow Adams2019 search runs on one shape only.
    for (const char *schedule : {"auto-Li2018", "auto-Mullapudi2016"})
        for (const Shape &s : {Shape{1, 1, 5, 7, 1}, Shape{37, 3, 19, 23, 3}})
            EXPECT_LT(verified_error(schedule, "fo", s), 1e-4) << schedule << " T=" << s.T;
    EXPECT_LT(verified_error("auto-Adams2019", "ifo", {3, 2, 9, 23, 4}), 1e-4);
}

TEST(Schedules, BadKnobAndWrongFamilyAreClearErrors) {
    EXPECT_THROW(verified_error("tuned", "fo", {3, 2, 9, 23, 4}, {{"no_such_knob", 1}}), std::exception);
    try {
        verified_error("chunked-scan", "fo", {3, 2, 9, 23, 4}, {{"chunk", 1}});
        FAIL() << "chunk=1 accepted";
    } catch (const std::exception &e) {
        EXPECT_NE(std::string(e.what()).find("knob 'chunk' = 1 is outside [2, 4096]"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace qrnn
