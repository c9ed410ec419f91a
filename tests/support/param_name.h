// gtest names for suites parameterised by plugin names: '-' is not allowed in a test name.
#pragma once
#include <gtest/gtest.h>

#include <string>

namespace qrnn::test {
inline std::string gtest_name(std::string s) {
    for (char &ch : s)
        if (ch == '-') ch = '_';
    return s;
}
inline std::string param_name(const ::testing::TestParamInfo<std::string> &info) { return gtest_name(info.param); }
}  // namespace qrnn::test
