// The vectorisable tanh/sigmoid of core/activations against libm in double, over the whole float range.
#include <gtest/gtest.h>

#include <cmath>

#include "core/activations.h"

using namespace Halide;

TEST(Activations, MatchDoubleWithinStatedError) {
    const int N = 200001;
    Buffer<float> in(N);
    for (int i = 0; i < N; i++) {
        double u = (i - N / 2) / double(N / 2);               // [-1, 1]
        in(i) = static_cast<float>(u * u * u * 60.0);          // dense near 0, reaching +-60
    }
    in(0) = -1e30f, in(N - 1) = 1e30f, in(N / 2) = 0.0f;
    ImageParam x(Float(32), 1, "x");
    Var i("i");
    Func t("t"), s("s");
    t(i) = qrnn::tanh_activation(x(i));
    s(i) = qrnn::sigmoid(x(i));
    t.vectorize(i, 16);
    s.vectorize(i, 16);
    x.set(in);
    Buffer<float> tv = t.realize({N}), sv = s.realize({N});
    double worst_t = 0, worst_s = 0, worst_t_at = 0;
    for (int k = 0; k < N; k++) {
        double v = in(k), et = std::tanh(v), es = 1.0 / (1.0 + std::exp(-v));
        ASSERT_TRUE(std::isfinite(tv(k)) && std::isfinite(sv(k))) << "at x = " << v;
        double rt = std::abs(tv(k) - et) / std::max(std::abs(et), 1e-30);
        if (rt > worst_t) worst_t = rt, worst_t_at = v;
        if (es > 1e-30) worst_s = std::max(worst_s, std::abs(sv(k) - es) / es);
    }
    // Without FMA (the SSE4.1 target) fast_exp's polynomial rounds once more per step.
    const bool fma = get_jit_target_from_environment().has_feature(Target::FMA);
    EXPECT_LT(worst_t, 5e-6) << "at x = " << worst_t_at;
    EXPECT_LT(worst_s, fma ? 2e-6 : 4e-6);
    EXPECT_EQ(tv(N / 2), 0.0f);
}
