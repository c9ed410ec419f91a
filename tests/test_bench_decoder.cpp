// `qrnn bench --what decoder --quick`: the rows it writes (table and --json) are well-formed: the decoder's training
// call against the summed best sgemm of its three GEMMs (each named) and its evaluation call against the best sgemm
// of the logits GEMM, ratios the median of per-round ratios with quartiles. Timing never decides pass/fail.
#include <gtest/gtest.h>

#include <regex>

#include "tests/support/bench_rows.h"

namespace qrnn::test {

TEST(BenchDecoder, QuickRowsAreWellFormed) {
    const QuickBench bench = run_quick_bench("decoder");
    ASSERT_EQ(bench.cli.exit_code, 0) << bench.cli.output;
    const std::vector<BenchRow> &rows = bench.rows;
    ASSERT_EQ(rows.size(), 2u) << bench.cli.output;  // the quick shape: training, evaluation
    EXPECT_EQ(rows[0].benchmark, "decoder training (3 GEMMs + softmax) vs best sgemm x3");
    EXPECT_EQ(rows[1].benchmark, "decoder evaluation (logits GEMM + softmax) vs best sgemm");
    for (const BenchRow &row : rows) {
        EXPECT_EQ(row.shape, "N=512 m=320 V=4000");
        auto [ours, ours_unit] = bench_quantity(row.ours);
        auto [ref, ref_unit] = bench_quantity(row.reference);
        EXPECT_TRUE(ours > 0 && ours_unit == "ms" && ref > 0 && ref_unit == "ms") << row.ours << " / " << row.reference;
        EXPECT_NE(row.ours.find(" GFLOP/s"), std::string::npos) << row.ours;
        EXPECT_TRUE(is_round_ratio_row(row, 0.90));
    }
    const std::string names = rows[0].reference.substr(rows[0].reference.find("ms ") + 3);
    EXPECT_TRUE(std::regex_match(names, std::regex(R"(\S+/\S+/\S+)"))) << rows[0].reference;
}

}  // namespace qrnn::test
