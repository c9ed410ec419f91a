// The rows `qrnn bench --json` writes, parsed back for the tests that check them (well-formed, never timing).
#pragma once
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace qrnn::test {

struct BenchRow {
    std::string benchmark, shape, ours, reference;
    double ratio, target;
    bool met;
    double ratio_q1 = NAN, ratio_q3 = NAN;  // quartiles of the per-round ratios, when the row has them
};

std::vector<BenchRow> bench_json_rows(const std::string &path);

// The leading number of "12.3 GFLOP/s ..." and the unit that follows it.
std::pair<double, std::string> bench_quantity(const std::string &text);

}  // namespace qrnn::test
