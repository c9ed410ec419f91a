// `qrnn bench --what arch --quick`: every row it writes (--json) is well-formed: for each quick shape, each
// architecture (dense stack, bidirectional concat and sum, variable length all T and random) forward and training
// step against its plain layer, milliseconds on both sides, ratios finite, positive and equal to plain ms / our ms.
// Running it also checks that the dense stack and the all-T variable-length layer compute what their plain layers
// compute (the bench fails otherwise). Timing never decides pass/fail.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <regex>

#include "tests/support/bench_rows.h"

namespace qrnn::test {

TEST(BenchArch, QuickRowsAreWellFormed) {
    const QuickBench bench = run_quick_bench("arch");
    const CliResult &r = bench.cli;
    ASSERT_EQ(r.exit_code, 0) << r.output;

    const std::vector<BenchRow> &rows = bench.rows;
    ASSERT_EQ(rows.size(), 20u) << r.output;  // two quick shapes x 5 comparisons x (forward, training step)
    const std::regex shape(R"(k=\d+ B=\d+ T=\d+ n=\d+ m=\d+)");
    const std::regex name(R"((.+) (forward|training step) vs (.+) \(plain/ours\))");
    std::map<std::string, int> per_architecture;
    for (const BenchRow &row : rows) {
        std::smatch m;
        ASSERT_TRUE(std::regex_match(row.benchmark, m, name)) << row.benchmark;
        per_architecture[m[1].str() + " vs " + m[3].str()]++;
        EXPECT_TRUE(std::regex_match(row.shape, shape)) << row.shape;
        auto [ours, ours_unit] = bench_quantity(row.ours);
        auto [plain, plain_unit] = bench_quantity(row.reference);
        EXPECT_EQ(ours_unit, "ms") << row.ours;
        EXPECT_EQ(plain_unit, "ms") << row.reference;
        EXPECT_TRUE(std::isfinite(ours) && ours > 0 && std::isfinite(plain) && plain > 0) << row.ours << " / " << row.reference;
        // The printed milliseconds are rounded to 0.0001: the ratio agrees with them to that precision.
        EXPECT_NEAR(row.ratio, plain / ours, 6e-5 / ours + 6e-5 * plain / (ours * ours) + 1e-3) << row.benchmark;
        EXPECT_DOUBLE_EQ(row.target, 0.90);
        EXPECT_EQ(row.met, row.ratio >= row.target);
    }
    const std::map<std::string, int> expected{
        {"dense stack (3 layers, pieces in place) vs plain layers n, n+m, n+2m (contiguous inputs)", 4},
        {"bidirectional concat vs plain layer of 2m units", 4},
        {"bidirectional sum vs plain layer of 2m units", 4},
        {"variable length (all T) vs plain layer", 4},
        {"variable length (random in [1,T], less work: information) vs plain layer", 4}};
    EXPECT_EQ(per_architecture, expected);
}

}  // namespace qrnn::test
