// The one exception type: a one-line message naming what is wrong.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace qrnn {
struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

template <class... Args>
[[noreturn]] void fail(const Args &...args) {
    std::ostringstream os;
    (os << ... << args);
    throw Error(os.str());
}
}  // namespace qrnn

namespace qrnn {
// A valid request this build or machine cannot serve (e.g. a CUDA baseline without a GPU). Sweeps record
// such runs with status "unavailable" instead of "failed".
struct Unavailable : Error {
    using Error::Error;
};
}  // namespace qrnn
