// `qrnn bench --what backward --quick`: every row it writes (table and --json) is well-formed: the dW and dX
// GEMMs of each quick shape against a named sgemm reference, the reverse scan against triad, ratios finite and
// positive, each (a median of per-round ratios) between its quartiles.
// Timing never decides pass/fail: "met" may be yes or no.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/support/bench_rows.h"

namespace qrnn::test {
TEST(BenchBackward, QuickRowsAreWellFormed) {
    const QuickBench bench = run_quick_bench("backward");
    const CliResult &r = bench.cli;
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("dW GEMM vs best sgemm"), std::string::npos) << r.output;  // the table too
    EXPECT_NE(r.output.find("backward scan (dcell) vs triad"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("clock wall: wall time, all cores"), std::string::npos) << r.output;  // the default

    const std::vector<BenchRow> &rows = bench.rows;
    // Two quick shapes x (dW, dX) and the scan.
    ASSERT_EQ(rows.size(), 5u) << r.output;
    const std::regex gemm_shape(R"(k=\d+ B=\d+ T=\d+ n=\d+ m=\d+)"), scan_shape(R"(B=\d+ T=\d+ m=\d+)");
    int dw = 0, dx = 0, scan = 0;
    for (const BenchRow &row : rows) {
        const bool is_scan = row.benchmark == "backward scan (dcell) vs triad (GB/s)";
        dw += row.benchmark == "dW GEMM vs best sgemm", dx += row.benchmark == "dX GEMM vs best sgemm", scan += is_scan;
        EXPECT_TRUE(std::regex_match(row.shape, is_scan ? scan_shape : gemm_shape)) << row.shape;
        auto [ours, ours_unit] = bench_quantity(row.ours);
        auto [ref, ref_unit] = bench_quantity(row.reference);
        const std::string unit = is_scan ? "GB/s" : "GFLOP/s";
        EXPECT_EQ(ours_unit, unit) << row.ours;
        EXPECT_EQ(ref_unit, unit) << row.reference;
        if (!is_scan) EXPECT_GT(row.reference.size(), ref_unit.size() + 4) << "names no sgemm: " << row.reference;
        EXPECT_TRUE(std::isfinite(ours) && ours > 0 && std::isfinite(ref) && ref > 0) << row.ours << " / " << row.reference;
        EXPECT_TRUE(is_round_ratio_row(row, is_scan ? 0.85 : 0.90));  // every row, the scan's too
    }
    EXPECT_EQ(dw, 2);
    EXPECT_EQ(dx, 2);
    EXPECT_EQ(scan, 1);
}

// --clock thread-cpu: the header and the JSON name the clock, the rows come out, and every timed call ran on the
// calling thread (the other threads' CPU time, which the JSON reports, is near 0). On the AVX2 path, which every
// kernel must run as compiled for (the bench fails otherwise: once infer_input_bounds recompiled dW and dX for the
// host, and the AVX2 rows timed AVX-512 code).
TEST(BenchBackward, ThreadCpuClockRunsOnOneThread) {
    const std::string json = scratch_path("bench_backward_cpu.json");
    CliResult r = run_cli("bench --what backward --quick --repeats 1 --clock thread-cpu --target "
                          "x86-64-linux-avx-avx2-fma-f16c --json " + json);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("clock thread-cpu: thread CPU time, one thread"), std::string::npos) << r.output;
    EXPECT_EQ(bench_json_rows(json).size(), 5u) << r.output;
    std::ifstream f(json);
    std::stringstream buffer;
    buffer << f.rdbuf();
    const std::string text = buffer.str();
    EXPECT_NE(text.find("\"clock\":\"thread-cpu\""), std::string::npos) << text;
    std::smatch share;
    ASSERT_TRUE(std::regex_search(text, share, std::regex(R"("other_threads_cpu_share":([-0-9.e]+))"))) << text;
    EXPECT_LT(std::stod(share[1]), 0.05) << "timed calls used other threads";
}

TEST(BenchBackward, ABadClockIsRefused) {
    expect_cli("bench --clock process --what backward", 2, "--clock: unknown clock 'process' (wall or thread-cpu)");
}

}  // namespace qrnn::test
