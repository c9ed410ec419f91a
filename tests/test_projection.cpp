// The pQRNN projection (nn/projection.h, docs/projection.md): the fast code against the plain reference on
// awkward tokens, feature counts and seeds; pinned features computed by tools/projection_reference.py (Python,
// python3-xxhash), so a change of hash, bit order or seed use fails; the feature statistics; the batch layout
// of project_sequence; bad configurations.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "nn/projection.h"
#include "reference/projection.h"
#include "tests/support/error_text.h"

using namespace qrnn;
using nn::ProjectionConfig;

namespace {

constexpr std::uint64_t kMaxSeed = std::numeric_limits<std::uint64_t>::max();

std::vector<float> fast_features(std::string_view token, int features, std::uint64_t seed) {
    std::vector<float> out(static_cast<size_t>(features), 99.0f);
    nn::project_token(ProjectionConfig{features, seed}, token, out.data());
    return out;
}

std::vector<int> as_ints(const std::vector<float> &features) {
    return std::vector<int>(features.begin(), features.end());
}

using qrnn::test::error_of;

std::vector<std::string> awkward_tokens() {
    return {
        "",                                                  // empty
        "a",                                                 // one byte
        "\xc3\xa9t\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac",        // "été 日本": non-ASCII UTF-8
        std::string("a\0b", 3),                              // an embedded NUL byte (hashed, not a terminator)
        std::string(32, 'x'),                                // exactly one XXH64 stripe
        std::string(33, 'x'),                                // one stripe and a byte
        "the quick brown fox jumps over the lazy dog, twice: the quick brown fox jumps over the lazy dog",
    };
}

}  // namespace

TEST(Projection, FastEqualsReferenceOnAwkwardCases) {
    const std::vector<int> counts = {1, 31, 32, 33, 64, 300};
    // 2^64 - 5: seed + word wraps to 0, 1, ... within 300 features (10 words).
    const std::vector<std::uint64_t> seeds = {0, 1, 42, std::uint64_t{1} << 63, kMaxSeed - 4, kMaxSeed};
    for (const auto &token : awkward_tokens())
        for (int n : counts)
            for (auto seed : seeds) {
                SCOPED_TRACE("token of " + std::to_string(token.size()) + " bytes, N=" + std::to_string(n) +
                             ", seed=" + std::to_string(seed));
                const std::vector<float> fast = fast_features(token, n, seed);
                const std::vector<int> ref = ref::projection_features(token, n, seed);
                ASSERT_EQ(ref.size(), static_cast<size_t>(n));
                for (int i = 0; i < n; i++) {
                    ASSERT_TRUE(fast[i] == -1.0f || fast[i] == 0.0f || fast[i] == 1.0f) << "feature " << i;
                    ASSERT_EQ(fast[i], static_cast<float>(ref[i])) << "feature " << i;
                }
            }
}

TEST(Projection, FeaturesDoNotDependOnTheirCount) {
    // Feature i depends only on (token, seed, i): a projection of N features is the prefix of a longer one.
    const std::vector<float> long_one = fast_features("prefix", 300, 9);
    for (int n : {1, 31, 32, 33, 299})
        EXPECT_EQ(fast_features("prefix", n, 9), std::vector<float>(long_one.begin(), long_one.begin() + n)) << n;
}

TEST(Projection, SeedPlusWordWrapsModulo2To64) {
    // Word 1 under seed 2^64-1 hashes with seed 0, word 0 under seed 0.
    const std::vector<float> at_max = fast_features("wrap", 64, kMaxSeed), at_zero = fast_features("wrap", 32, 0);
    EXPECT_EQ(std::vector<float>(at_max.begin() + 32, at_max.end()), at_zero);
}

// Computed once by tools/projection_reference.py --features N --seed S TOKEN (Python and python3-xxhash, not
// this C++ code), e.g. `tools/projection_reference.py --features 40 --seed 0 ""`. Also in docs/projection.md.
TEST(Projection, PinnedGoldenFeatures) {
    struct Golden {
        std::string token;
        std::uint64_t seed;
        std::vector<int> features;
    };
    const std::vector<Golden> goldens = {
        {"", 0, {1, -1, 1, -1, 1, -1, -1, 0, 0, -1, 1, 0, 1, 0, 1, 1, 0, 1, 0, 0,
                 0, -1, 1, 0, -1, 1, 0, 1, 0, 0, -1, 0, 0, -1, 0, 1, -1, 0, 0, -1}},
        {"a", 42, {0, 0, 0, 0, 0, 0, 0, -1, 0, 1, 0, 0, 1, 0, -1, -1, 1, -1, 1, 1,
                   -1, 0, 0, 0, 0, 1, -1, 0, 0, -1, 0, -1, 0, 0, 0, 0, 1, 0, 0, -1}},
        {"h\xc3\xa9llo", 42, {-1, 0, 0, 0, -1, -1, 0, 0, 0, 0, 0, -1, -1, -1, 1, 1, 0, 0, 0, -1,
                              0, -1, -1, 1, 1, 1, 0, 0, -1, 1, 0, 0, 1, 1, 1, -1, 0, 0, 0, 0}},
        {"the quick brown fox jumps over the lazy dog", kMaxSeed,
         {-1, 1, -1, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1, -1, 0, 0, 0,
          -1, -1, 0, 1, 1, 0, 0, 0, -1, 0, 0, -1, -1, 0, 1, -1, 0, 1, -1, -1}},
        {"projection", 2025, {1, 0, 0, -1, -1, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, -1, -1, 0, 0, -1, 1, 1, 0, 1,
                              1, 1, 0, -1, 1, 0, 0, 1, -1, -1, 1, 1, 0, 0, -1, 0, 0, 0, 1, 0, 0, 0, -1, 0,
                              0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}},
    };
    for (const auto &g : goldens) {
        const int n = static_cast<int>(g.features.size());
        SCOPED_TRACE("token '" + g.token + "', seed " + std::to_string(g.seed) + ", N=" + std::to_string(n));
        EXPECT_EQ(as_ints(fast_features(g.token, n, g.seed)), g.features);
        EXPECT_EQ(ref::projection_features(g.token, n, g.seed), g.features);
    }
}

TEST(Projection, FeatureStatisticsAndSeedsDiffer) {
    const int tokens = 2000, n = 64;
    int64_t zeros = 0, plus = 0, minus = 0, differing_tokens = 0;
    for (int k = 0; k < tokens; k++) {
        const std::string token = "token" + std::to_string(k);
        const std::vector<float> f = fast_features(token, n, 1);
        for (float v : f) zeros += v == 0.0f, plus += v == 1.0f, minus += v == -1.0f;
        differing_tokens += f != fast_features(token, n, 2);
    }
    const double total = double(tokens) * n;
    EXPECT_NEAR(zeros / total, 0.5, 0.02);
    EXPECT_NEAR(plus / total, 0.25, 0.02);
    EXPECT_NEAR(minus / total, 0.25, 0.02);
    EXPECT_EQ(differing_tokens, tokens);  // two seeds: other features for every token
    EXPECT_NE(fast_features("token0", n, 1), fast_features("token1", n, 1));
}

TEST(Projection, SequenceLayoutAndPadding) {
    const ProjectionConfig cfg{33, 5};
    const std::vector<std::vector<std::string>> batch = {{"the", "cat", "sat"}, {"a"}, {}, {"x", "y"}};
    const Tensor<float> x = nn::project_sequence(cfg, batch);
    const int64_t T = 3, B = 4, N = 33;
    ASSERT_EQ(x.shape, (std::vector<int64_t>{T, B, N}));  // [T][B][features], as nn::Layer::forward takes x
    for (int64_t b = 0; b < B; b++)
        for (int64_t t = 0; t < T; t++) {
            const float *step = &x.data[static_cast<size_t>((t * B + b) * N)];
            const std::vector<float> got(step, step + N);
            if (t < static_cast<int64_t>(batch[b].size()))
                EXPECT_EQ(got, fast_features(batch[b][t], N, cfg.seed)) << "t=" << t << " b=" << b;
            else
                EXPECT_EQ(got, std::vector<float>(N, 0.0f)) << "padding t=" << t << " b=" << b;
        }
    EXPECT_EQ(nn::project_sequence(cfg, {{}, {}}).shape, (std::vector<int64_t>{0, 2, N}));
}

TEST(Projection, BadConfigNamesTheValue) {
    auto error = [](int features) {
        return error_of([&] { nn::validate_projection_config(ProjectionConfig{features, 0}); });
    };
    EXPECT_EQ(error(0), "projection features must be in [1, 4096] (got 0)");
    EXPECT_EQ(error(-3), "projection features must be in [1, 4096] (got -3)");
    EXPECT_EQ(error(4097), "projection features must be in [1, 4096] (got 4097)");
    EXPECT_EQ(error(1), "<no error>");
    EXPECT_EQ(error(4096), "<no error>");
    float out[1];
    EXPECT_EQ(error_of([&] { nn::project_token(ProjectionConfig{0, 0}, "a", out); }),
              "projection features must be in [1, 4096] (got 0)");
    EXPECT_EQ(error_of([&] { nn::project_sequence(ProjectionConfig{-1, 0}, {{"a"}}); }),
              "projection features must be in [1, 4096] (got -1)");
}
