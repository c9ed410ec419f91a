#include "runtime/parse_number.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/error.h"

namespace qrnn {
namespace {

// The whole of text by convert (std::stoll, std::stod); `what` names the expected kind.
template <class Convert>
auto parse_whole(const std::string &text, Convert convert, const char *what) {
    size_t used = 0;
    decltype(convert(text, &used)) x{};
    try {
        x = convert(text, &used);
    } catch (const std::exception &) {
        used = 0;
    }
    if (used == 0 || used != text.size()) fail("not ", what);
    return x;
}

}  // namespace

int64_t parse_int(const std::string &text) {
    return parse_whole(text, [](const std::string &s, size_t *used) { return int64_t(std::stoll(s, used)); }, "an integer");
}

double parse_finite(const std::string &text) {
    // strtod, not stod: stod refuses subnormals (1e-320) as out of range; they are finite numbers.
    const auto strtod_whole = [](const std::string &s, size_t *used) {
        char *end = nullptr;
        const double x = std::strtod(s.c_str(), &end);
        *used = static_cast<size_t>(end - s.c_str());
        return x;
    };
    const double x = parse_whole(text, strtod_whole, "a finite number");
    if (!std::isfinite(x)) fail("not a finite number");
    return x;
}

std::string number_str(double d) {
    char buf[64];
    if (d == std::floor(d) && std::abs(d) < 1e15) {
        std::snprintf(buf, sizeof buf, "%.0f", d);
        return buf;
    }
    for (int precision = 1; precision <= 17; precision++) {
        std::snprintf(buf, sizeof buf, "%.*g", precision, d);
        if (std::strtod(buf, nullptr) == d) break;
    }
    return buf;
}

}  // namespace qrnn
