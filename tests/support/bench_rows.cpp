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

std::pair<double, std::string> bench_quantity(const std::string &text) {
    std::istringstream in(text);
    double value = NAN;
    std::string unit;
    in >> value >> unit;
    return {value, unit};
}

}  // namespace qrnn::test
