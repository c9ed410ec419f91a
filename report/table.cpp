#include "report/table.h"

#include <cstdio>
#include <iomanip>

namespace qrnn::cli {

void Table::print(std::ostream &os) const {
    std::vector<size_t> width;
    for (auto &row : rows_)
        for (size_t i = 0; i < row.size(); i++) {
            if (width.size() <= i) width.push_back(0);
            width[i] = std::max(width[i], row[i].size());
        }
    for (auto &row : rows_) {
        for (size_t i = 0; i < row.size(); i++) os << (i ? "  " : "") << std::setw(static_cast<int>(width[i])) << row[i];
        os << "\n";
    }
}

std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string scientific(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*e", decimals, v);
    return buf;
}

}  // namespace qrnn::cli
