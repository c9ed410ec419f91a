// A plain text table with right-aligned columns, printed once all rows are in.
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace qrnn::cli {

class Table {
public:
    explicit Table(std::vector<std::string> header) : rows_{std::move(header)} {}
    void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
    void print(std::ostream &os) const;

private:
    std::vector<std::vector<std::string>> rows_;
};

std::string fixed(double v, int decimals);
std::string scientific(double v, int decimals = 2);

}  // namespace qrnn::cli
