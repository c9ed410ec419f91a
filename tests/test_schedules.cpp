// Every CPU schedule x pooling x awkward shape against the double reference (runtime/experiment verify).
#include <gtest/gtest.h>

#include "runtime/autotuner.h"
#include "runtime/experiment.h"
#include "schedules/schedule.h"

namespace qrnn {
namespace {

struct Shape {
    int64_t T, B, n, m, k;
};
// T = 1, B = 1, widths off the vector size, k > T, T off the chunk lengths.
const Shape kAwkward[] = {{1, 1, 5, 7, 1}, {3, 2, 9, 23, 4}, {37, 1, 17, 33, 2}, {70, 3, 16, 16, 3}};

double verified_error(const std::string &schedule, const std::string &pooling, const Shape &s, const Knobs &knobs = {},
                      bool training = false) {
    ModelConfig cfg = layer_config(pooling, {s.T, s.B, s.n, s.m, s.k});
    cfg.schedule = schedule;
    if (training) {
        cfg.training = true;
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
                         [](const auto &info) {
                             std::string name = std::get<0>(info.param) + "_" + std::get<1>(info.param);
                             for (auto &ch : name)
                                 if (ch == '-') ch = '_';
                             return name;
                         });

TEST(Schedules, TrainingMasksAndStacking) {
    for (const char *schedule : {"tuned", "fused", "chunked-scan"})
        EXPECT_LT(verified_error(schedule, "fo", {37, 2, 9, 23, 2}, {}, true), 1e-4) << schedule;
}

TEST(Schedules, NonDefaultKnobs) {
    EXPECT_LT(verified_error("tuned", "ifo", {37, 2, 9, 50, 2}, {{"chains", 2}, {"tile_t", 6}}), 1e-4);
    EXPECT_LT(verified_error("fused", "fo", {37, 2, 9, 50, 3}, {{"chunk", 8}, {"tile_h_vectors", 2}}), 1e-4);
    EXPECT_LT(verified_error("chunked-scan", "f", {100, 1, 9, 40, 2}, {{"chunk", 16}, {"chains", 4}}), 1e-4);
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
