// One unmeasured run of a configuration with --verify: the relative error against its double reference.
#pragma once
#include "runtime/config.h"

namespace qrnn::test {

// max|y - ref| / max|ref| of one run (warm-up 0, 1 repeat); a non-finite or missing error fails the calling test
// and returns 1.
double verified_error(const ModelConfig &cfg);

}  // namespace qrnn::test
