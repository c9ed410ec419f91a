// `qrnn bench --what attention --quick`: every row it writes (table and --json) is well-formed: the attention
// forward and backward of each quick shape against the summed best sgemm of their GEMMs, names of the
// references given, ratios finite, positive and the median of per-round ratios between their quartiles; the rows
// say they time warm calls. Timing never decides pass/fail.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "tests/support/bench_rows.h"

namespace qrnn::test {

TEST(BenchAttention, QuickRowsAreWellFormed) {
    const QuickBench bench = run_quick_bench("attention");
    const CliResult &r = bench.cli;
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("attention forward (3 GEMMs + softmax) vs best sgemm x3, warm calls"), std::string::npos) << r.output;

    const std::vector<BenchRow> &rows = bench.rows;
    ASSERT_EQ(rows.size(), 4u) << r.output;  // two quick shapes x (forward, backward)
    const std::regex shape(R"(T=\d+ S=\d+ B=\d+ m=\d+)");
    const std::regex names_forward(R"(\S+/\S+/\S+)"), names_backward(R"(\S+/\S+/\S+/\S+/\S+)");
    int forward = 0, backward = 0;
    for (const BenchRow &row : rows) {
        const bool is_forward = row.benchmark == "attention forward (3 GEMMs + softmax) vs best sgemm x3, warm calls";
        forward += is_forward, backward += row.benchmark == "attention backward (5 GEMMs + softmax) vs best sgemm x5, warm calls";
        EXPECT_TRUE(std::regex_match(row.shape, shape)) << row.shape;
        auto [ours, ours_unit] = bench_quantity(row.ours);
        auto [ref, ref_unit] = bench_quantity(row.reference);
        EXPECT_EQ(ours_unit, "ms") << row.ours;
        EXPECT_EQ(ref_unit, "ms") << row.reference;
        EXPECT_NE(row.ours.find(" GFLOP/s"), std::string::npos) << row.ours;
        const std::string names = row.reference.substr(row.reference.find("ms ") + 3);
        EXPECT_TRUE(std::regex_match(names, is_forward ? names_forward : names_backward)) << row.reference;
        EXPECT_TRUE(std::isfinite(ours) && ours > 0 && std::isfinite(ref) && ref > 0) << row.ours << " / " << row.reference;
        EXPECT_TRUE(is_round_ratio_row(row, 0.90));  // 3 rounds at --repeats 1
    }
    EXPECT_EQ(forward, 2);
    EXPECT_EQ(backward, 2);
}

}  // namespace qrnn::test
