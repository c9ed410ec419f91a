// gtest names for suites parameterised by plugin names (and NAME@PRECISION): only letters, digits and '_' are allowed.
#pragma once
#include <gtest/gtest.h>

#include <string>

namespace qrnn::test {
inline std::string gtest_name(std::string s) {
    for (char &ch : s)
        if (ch == '-' || ch == '@') ch = '_';
    return s;
}
inline std::string param_name(const ::testing::TestParamInfo<std::string> &info) { return gtest_name(info.param); }
}  // namespace qrnn::test
