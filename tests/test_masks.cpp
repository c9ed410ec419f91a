// Zoneout/dropout masks: rate within statistical bounds, reproducible from the seed, independent streams.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "core/hash_rng.h"
#include "reference/reference.h"

using namespace qrnn;

namespace {
double drop_rate(uint32_t key, uint32_t threshold, int T, int B, int C) {
    int64_t dropped = 0;
    for (int t = 0; t < T; t++)
        for (int b = 0; b < B; b++)
            for (int c = 0; c < C; c++) dropped += !ref::keep(key, threshold, t, b, c);
    return double(dropped) / (double(T) * B * C);
}
}  // namespace

TEST(Masks, RateWithinFiveSigma) {
    const int T = 200, B = 16, C = 320;
    const double N = double(T) * B * C;
    for (double p : {0.01, 0.1, 0.25, 0.5, 0.9}) {
        double rate = drop_rate(stream_key(1234, 1), drop_threshold(p), T, B, C);
        EXPECT_NEAR(rate, p, 5 * std::sqrt(p * (1 - p) / N)) << "p = " << p;
    }
}

TEST(Masks, RateIsUniformAcrossTimeAndChannels) {
    // A biased hash shows up as a per-step or per-channel rate far from p.
    const double p = 0.3;
    const uint32_t key = stream_key(99, 3), thr = drop_threshold(p);
    for (int t : {0, 1, 2, 1000, 65535}) {
        int64_t dropped = 0;
        for (int b = 0; b < 64; b++)
            for (int c = 0; c < 512; c++) dropped += !ref::keep(key, thr, t, b, c);
        EXPECT_NEAR(dropped / (64.0 * 512), p, 5 * std::sqrt(p * (1 - p) / (64.0 * 512))) << "t = " << t;
    }
}

TEST(Masks, ZeroRateKeepsEverything) {
    EXPECT_EQ(drop_threshold(0.0), 0u);
    EXPECT_EQ(drop_rate(stream_key(5, 1), 0, 10, 4, 50), 0.0);
}

TEST(Masks, SameSeedSameMaskOtherSeedOrStreamDiffers) {
    const uint32_t thr = drop_threshold(0.5);
    auto pattern = [&](uint32_t seed, uint32_t stream) {
        std::vector<bool> bits;
        for (int t = 0; t < 20; t++)
            for (int c = 0; c < 50; c++) bits.push_back(ref::keep(stream_key(seed, stream), thr, t, 0, c));
        return bits;
    };
    EXPECT_EQ(pattern(7, 1), pattern(7, 1));
    EXPECT_NE(pattern(7, 1), pattern(8, 1));
    EXPECT_NE(pattern(7, 1), pattern(7, 3));
}

TEST(Masks, TrainingMasksOnlyInTrainingMode) {
    ModelConfig cfg;
    cfg.layers = 2, cfg.zoneout = 0.2, cfg.dropout = 0.1;
    EXPECT_EQ(layer_masks(cfg, 1).zoneout_threshold, 0u);
    cfg.stochastic = true;
    EXPECT_EQ(layer_masks(cfg, 0).dropout_threshold, 0u);  // no dropout before the first layer
    EXPECT_NE(layer_masks(cfg, 1).dropout_threshold, 0u);
    EXPECT_NE(layer_masks(cfg, 0).zoneout_key, layer_masks(cfg, 1).zoneout_key);
    EXPECT_DOUBLE_EQ(layer_masks(cfg, 1).dropout_scale, 1.0 / 0.9);
}

// Draw 0 keeps the keys of core/layout.h (the LM's masks, indexed by absolute time, are unchanged); every other
// draw (the synthetic tasks' training step) re-keys each stream: a pure function of (seed, draw, layer).
TEST(Masks, EachDrawRekeysTheStreamsAndDrawZeroIsTheAbsoluteTimeStream) {
    ModelConfig cfg;
    cfg.layers = 2, cfg.zoneout = 0.2, cfg.dropout = 0.1, cfg.stochastic = true, cfg.seed = 5;
    EXPECT_EQ(layer_masks(cfg, 1).dropout_key, stream_key(5, 2));
    EXPECT_EQ(layer_masks(cfg, 1).zoneout_key, stream_key(5, 3));
    auto keys = [&](uint64_t draw, int64_t layer) {
        ModelConfig c = cfg;
        c.mask_draw = draw;
        const LayerMasks m = layer_masks(c, layer);
        return std::pair{m.dropout_key, m.zoneout_key};
    };
    std::set<uint32_t> seen;
    for (uint64_t draw : {0ull, 1ull, 2ull, 3ull, 1ull << 32})
        for (int64_t layer : {0, 1}) {
            EXPECT_EQ(keys(draw, layer), keys(draw, layer));
            seen.insert(keys(draw, layer).second);
            if (layer) seen.insert(keys(draw, layer).first);
        }
    EXPECT_EQ(seen.size(), 15u);  // 5 draws x (zoneout of layers 0, 1 and dropout of layer 1): all different
}
