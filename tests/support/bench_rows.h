// The rows `qrnn bench --json` writes, parsed back for the tests that check them (well-formed, never timing).
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace qrnn::test {

struct BenchRow {
    std::string benchmark, shape, ours, reference;
    double ratio, target;
    bool met;
};

std::vector<BenchRow> bench_json_rows(const std::string &path);

// The leading number of "12.3 GFLOP/s ..." and the unit that follows it.
std::pair<double, std::string> bench_quantity(const std::string &text);

}  // namespace qrnn::test
