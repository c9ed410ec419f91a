// The text of the error a call raises, for tests that pin one-line error messages.
#pragma once
#include <functional>
#include <string>

#include "core/error.h"

namespace qrnn::test {

// The qrnn::Error message of f(), or "<no error>" when it does not throw.
inline std::string error_of(const std::function<void()> &f) {
    try {
        f();
    } catch (const Error &e) {
        return e.what();
    }
    return "<no error>";
}

}  // namespace qrnn::test
