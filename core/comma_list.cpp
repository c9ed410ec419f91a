#include "core/comma_list.h"

#include "core/error.h"

namespace qrnn {

std::vector<std::string> split_comma_list(const std::string &text, const std::string &item, bool trim) {
    std::vector<std::string> items;
    for (size_t start = 0;;) {
        const size_t comma = text.find(',', start);
        std::string one = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (trim) {
            one.erase(0, one.find_first_not_of(' '));
            one.erase(one.find_last_not_of(' ') + 1);
        }
        if (one.empty()) fail("empty ", item, " in the list");
        items.push_back(std::move(one));
        if (comma == std::string::npos) return items;
        start = comma + 1;
    }
}

}  // namespace qrnn
