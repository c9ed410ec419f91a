// `qrnn bench --what attention --quick`: every row it writes (table and --json) is well-formed. For each quick
// shape and each of forward and backward, two rows: against its steps run in order in the best libraries (the same
// work: sgemm for the GEMMs, in one library or each in its fastest, and oneDNN for the softmax and products, target
// 0.90) and against its GEMMs alone (a floor, target 0.80); both rows time the same pipeline. Names of the
// references given, ratios finite, positive and the median of per-round ratios between their quartiles; the rows
// say they time warm calls. Timing never decides pass/fail.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <regex>

#include "tests/support/bench_rows.h"

namespace qrnn::test {

TEST(BenchAttention, QuickRowsAreWellFormed) {
    const QuickBench bench = run_quick_bench("attention");
    const CliResult &r = bench.cli;
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const std::string same_work[2] = {
        "attention forward vs its steps in the best libraries, in order (same work), warm calls",
        "attention backward vs its steps in the best libraries, in order (same work), warm calls"};
    const std::string floor[2] = {"attention forward vs its GEMMs alone at best sgemm x3 (floor), warm calls",
                                  "attention backward vs its GEMMs alone at best sgemm x5 (floor), warm calls"};
    EXPECT_NE(r.output.find(same_work[0]), std::string::npos) << r.output;

    const std::vector<BenchRow> &rows = bench.rows;
    ASSERT_EQ(rows.size(), 8u) << r.output;  // two quick shapes x (forward, backward) x (same work, floor)
    const std::regex shape(R"(T=\d+ S=\d+ B=\d+ m=\d+)");
    const std::regex gemms[2] = {std::regex(R"(\S+/\S+/\S+)"), std::regex(R"(\S+/\S+/\S+/\S+/\S+)")};
    // The chain's GEMMs in one library ("<name> x3") or each in its fastest; then its two passes each way.
    const std::regex chains[2] = {std::regex(R"((\S+ x3|\S+/\S+/\S+) \+ dnnl(-1t)?/dnnl(-1t)?)"),
                                  std::regex(R"((\S+ x5|\S+/\S+/\S+/\S+/\S+) \+ dnnl(-1t)?/dnnl(-1t)?)")};
    std::map<std::string, const BenchRow *> by_key;  // benchmark + shape
    for (const BenchRow &row : rows) {
        by_key[row.benchmark + "|" + row.shape] = &row;
        EXPECT_TRUE(std::regex_match(row.shape, shape)) << row.shape;
        auto [ours, ours_unit] = bench_quantity(row.ours);
        auto [ref, ref_unit] = bench_quantity(row.reference);
        EXPECT_EQ(ours_unit, "ms") << row.ours;
        EXPECT_EQ(ref_unit, "ms") << row.reference;
        EXPECT_NE(row.ours.find(" GFLOP/s"), std::string::npos) << row.ours;
        EXPECT_TRUE(std::isfinite(ours) && ours > 0 && std::isfinite(ref) && ref > 0) << row.ours << " / " << row.reference;
    }
    for (const std::string s : {"T=32 S=32 B=4 m=64", "T=7 S=5 B=3 m=33"})
        for (int pass = 0; pass < 2; pass++) {
            const BenchRow *work = by_key[same_work[pass] + "|" + s], *gemm = by_key[floor[pass] + "|" + s];
            ASSERT_TRUE(work && gemm) << s << "\n" << r.output;
            EXPECT_TRUE(is_round_ratio_row(*work, 0.90));  // 3 rounds at --repeats 1
            EXPECT_TRUE(is_round_ratio_row(*gemm, 0.80));
            const std::string gemm_names = gemm->reference.substr(gemm->reference.find("ms ") + 3);
            EXPECT_TRUE(std::regex_match(gemm_names, gemms[pass])) << gemm->reference;
            const std::string work_names = work->reference.substr(work->reference.find("ms ") + 3);
            EXPECT_TRUE(std::regex_match(work_names, chains[pass])) << work->reference;
        }
}

}  // namespace qrnn::test
