// The rows `qrnn bench --json` writes, parsed back for the tests that check them (well-formed, never timing).
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/cli.h"

namespace qrnn::test {

struct BenchRow {
    std::string benchmark, shape, ours, reference;
    double ratio, target;
    bool met;
    double ratio_q1 = NAN, ratio_q3 = NAN;  // quartiles of the per-round ratios, when the row has them
};

std::vector<BenchRow> bench_json_rows(const std::string &path);

// `qrnn bench --what <what> --quick --repeats 1 --json <scratch file>`: its exit code and output, and the rows.
struct QuickBench {
    CliResult cli;
    std::vector<BenchRow> rows;
};
QuickBench run_quick_bench(const std::string &what);

// The leading number of "12.3 GFLOP/s ..." and the unit that follows it.
std::pair<double, std::string> bench_quantity(const std::string &text);

// A row whose ratio is the median of per-round ratios: finite and positive, between its quartiles (JSON rounds
// to 4 decimals), its target `target` and `met` saying whether the ratio reaches it.
testing::AssertionResult is_round_ratio_row(const BenchRow &row, double target);

}  // namespace qrnn::test
