// The variable-length / bidirectional QRNN layer's pipelines on every lower CPU target this machine runs
// (SSE4.1, and AVX2 on an AVX-512 machine) and with the "naive" schedule, against the double reference:
// forward and every gradient (tests/support/seq_check.h). Host "tuned" and the reference itself:
// test_seq_layer.cpp.
#include <gtest/gtest.h>

#include "schedules/cpu_target.h"
#include "tests/support/seq_check.h"

namespace qrnn::test {
namespace {
constexpr double kTolerance = 1e-4;
}

// Each target: T = 1 < k with 2 layers, and one of the wider shapes (m = 64, or m = 33 whose width-chosen tiles pad
// least), the other on the next target (the pipelines compile per shape and target: a quarter of a minute each).
TEST(SeqTargets, LowerTargetsMatchReference) {
    int lower = 0;
    for (const Halide::Target &target : runnable_cpu_targets()) {
        if (target_isa(target) == target_isa(Halide::get_host_target())) continue;
        for (const SeqShape &s : {kSeqShapes[1], kSeqShapes[lower++ % 2 ? 4 : 5]}) {
            ModelConfig cfg = seq_config(s, "qrnn-bidir-varlen");
            cfg.target = target.to_string();
            std::string worst;
            EXPECT_LE(seq_halide_vs_reference(cfg, worst), kTolerance) << cfg.target << " " << cfg.describe() << ": worst " << worst;
        }
    }
}

TEST(SeqTargets, NaiveScheduleMatchesReference) {
    for (const SeqShape &s : kSeqShapes) {
        ModelConfig cfg = seq_config(s, "qrnn-bidir-varlen", "naive");
        std::string worst;
        EXPECT_LE(seq_halide_vs_reference(cfg, worst), kTolerance) << cfg.describe() << ": worst " << worst;
    }
}

// The comparison is not vacuous: a reference run with other lengths (all full) differs from the layer's.
TEST(SeqTargets, WrongLengthsFailTheComparison) {
    ModelConfig cfg = seq_config(kSeqShapes[3], "qrnn-bidir-varlen", "naive");  // compiled above already
    const std::vector<int32_t> full(cfg.batch, static_cast<int32_t>(cfg.seq));
    std::string worst;
    EXPECT_GT(seq_halide_vs_reference(cfg, worst, &full), 100 * kTolerance);
}

}  // namespace qrnn::test
