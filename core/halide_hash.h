// Halide Expr specialisation of the shared hash.
#pragma once
#include <Halide.h>
#include "core/hash_rng.h"

namespace qrnn {
template <>
inline Halide::Expr hash_const<Halide::Expr>(uint32_t v) { return Halide::Internal::make_const(Halide::UInt(32), v); }
}  // namespace qrnn
