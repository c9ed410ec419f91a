#include "tests/support/bench_rows.h"

#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>

namespace qrnn::test {

std::vector<BenchRow> bench_json_rows(const std::string &path) {
    std::ifstream f(path);
    std::stringstream text;
    text << f.rdbuf();
    static const std::regex row(
        R"re(\{"benchmark":"([^"]+)","shape":"([^"]+)","ours":"([^"]+)","reference":"([^"]+)","ratio":([-0-9.eE+a-z]+)(?:,"ratio_q1":([-0-9.eE+a-z]+),"ratio_q3":([-0-9.eE+a-z]+))?,"target":([0-9.]+),"met":(true|false)\})re");
    std::vector<BenchRow> rows;
    const std::string s = text.str();
    for (auto it = std::sregex_iterator(s.begin(), s.end(), row); it != std::sregex_iterator(); ++it) {
        const std::smatch &m = *it;
        rows.push_back({m[1], m[2], m[3], m[4], std::stod(m[5]), std::stod(m[8]), m[9] == "true"});
        if (m[6].matched) rows.back().ratio_q1 = std::stod(m[6]), rows.back().ratio_q3 = std::stod(m[7]);
    }
    return rows;
}

testing::AssertionResult is_round_ratio_row(const BenchRow &row, double target) {
    auto fails = [&](const std::string &why) { return testing::AssertionFailure() << row.benchmark << " " << row.shape << ": " << why; };
    if (!(std::isfinite(row.ratio) && row.ratio > 0)) return fails("ratio " + std::to_string(row.ratio));
    if (!(std::isfinite(row.ratio_q1) && row.ratio_q1 > 0 && std::isfinite(row.ratio_q3))) return fails("no quartiles");
    if (row.ratio_q1 > row.ratio + 1e-4 || row.ratio > row.ratio_q3 + 1e-4) return fails("median outside its quartiles");
    if (row.target != target) return fails("target " + std::to_string(row.target));
    if (row.met != (row.ratio >= row.target)) return fails("met disagrees with the ratio");
    return testing::AssertionSuccess();
}

QuickBench run_quick_bench(const std::string &what) {
    const std::string json = scratch_path("bench_" + what + ".json");
    CliResult cli = run_cli("bench --what " + what + " --quick --repeats 1 --json " + json);
    return {cli, bench_json_rows(json)};
}

std::pair<double, std::string> bench_quantity(const std::string &text) {
    std::istringstream in(text);
    double value = NAN;
    std::string unit;
    in >> value >> unit;
    return {value, unit};
}

}  // namespace qrnn::test
