#include "reference/projection.h"

#include <bitset>
#include <string>
#include <xxhash.h>

namespace qrnn::ref {
namespace {

// Bit k (k = 0 the least significant) of a 64-bit value: std::bitset::to_string puts bit 63 first.
int bit_of(std::uint64_t value, int k) {
    const std::string bits = std::bitset<64>(value).to_string();
    return bits[63 - k] == '1' ? 1 : 0;
}

}  // namespace

std::vector<int> projection_features(std::string_view token, int features, std::uint64_t seed) {
    std::vector<int> out;
    for (int i = 0; i < features; i++) {
        const int word = i / 32, pair = i % 32;
        const std::uint64_t word_seed = seed + static_cast<std::uint64_t>(word);  // wraps modulo 2^64
        const std::uint64_t h = XXH64(token.data(), token.size(), word_seed);
        out.push_back(bit_of(h, 2 * pair) - bit_of(h, 2 * pair + 1));
    }
    return out;
}

}  // namespace qrnn::ref
