// Numbers from text (config values, command-line options): the whole text or a qrnn::Error saying what it is
// not ("not an integer", "not a finite number"), to which callers add the key or option and the value.
#pragma once
#include <cstdint>
#include <string>

namespace qrnn {

int64_t parse_int(const std::string &text);
double parse_finite(const std::string &text);
// The shortest text that reads back as d; whole numbers without an exponent.
std::string number_str(double d);

}  // namespace qrnn
