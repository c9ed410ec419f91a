// Plain reference of the pQRNN projection (nn/projection.h, docs/projection.md), written the obvious way
// and apart from the fast code's bit tricks: each hash word's 64 bits spelled out as a string, read in pairs.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

namespace qrnn::ref {

// The `features` features (-1, 0 or +1) of token's bytes under `seed`.
std::vector<int> projection_features(std::string_view token, int features, std::uint64_t seed);

}  // namespace qrnn::ref
