// The encoder-decoder's double reference (reference/encoder_decoder.h, reference/attention.h) against
// central finite differences of L = sum(dout * out), for every parameter, the source and the target, on
// awkward shapes, every pooling, with and without attention, masks off and on. Deliberately broken gradients
// fail the same check; bad configurations and lengths are one-line errors.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "core/error.h"
#include "tests/support/encdec_problem.h"
#include "tests/support/finite_differences.h"

namespace qrnn::test {
namespace {
constexpr double kTolerance = 1e-6;

FdWorst check(EncDecProblem &p) {
    ref::EncDecGrads g = ref::encdec_backward(p.cfg, p.params, p.source, p.lengths, p.target, p.dout);
    return finite_difference_check(encdec_grad_pairs(p, g), [&] { return encdec_loss(p); }, 1e-5);
}
}  // namespace

class EncDecReference : public ::testing::TestWithParam<std::tuple<std::string, bool, bool>> {};

TEST_P(EncDecReference, MatchesFiniteDifferences) {
    auto [pooling, attention, stochastic] = GetParam();
    double worst = 0;
    for (const EncDecShape &s : encdec_shapes()) {
        EncDecProblem p = make_encdec_problem(s, pooling, attention, stochastic);
        FdWorst r = check(p);
        EXPECT_LE(r.rel, kTolerance) << p.cfg.describe() << ": worst " << r.name;
        worst = std::max(worst, r.rel);
    }
    std::cout << pooling << (attention ? " attention" : " no attention") << (stochastic ? " masks" : "")
              << ": worst rel err vs finite differences " << worst << "\n";
}

INSTANTIATE_TEST_SUITE_P(EveryPooling, EncDecReference,
                         ::testing::Combine(::testing::Values("f", "fo", "ifo"), ::testing::Bool(), ::testing::Bool()));

TEST(EncDecReference, MasksAreActuallyOn) {
    for (bool attention : {false, true}) {
        EncDecProblem on = make_encdec_problem(encdec_shapes()[1], "fo", attention, true);
        EncDecProblem off = make_encdec_problem(encdec_shapes()[1], "fo", attention, false);
        EXPECT_NE(encdec_loss(on), encdec_loss(off));
    }
}

TEST(EncDecReference, PerturbedGradientsFail) {
    EncDecProblem p = make_encdec_problem(encdec_shapes()[1], "fo", true, false);
    ref::EncDecGrads g = ref::encdec_backward(p.cfg, p.params, p.source, p.lengths, p.target, p.dout);
    auto loss = [&] { return encdec_loss(p); };
    ASSERT_LE(finite_difference_check(encdec_grad_pairs(p, g), loss, 1e-5).rel, kTolerance);
    for (Tensor<double> *t : {&g.params.attention, &g.params.condition[0], &g.dsource}) {
        ref::EncDecGrads broken = g;
        Tensor<double> *target = t == &g.params.attention ? &broken.params.attention
                                 : t == &g.dsource        ? &broken.dsource
                                                          : &broken.params.condition[0];
        target->data[1] += 1e-3;
        EXPECT_GT(finite_difference_check(encdec_grad_pairs(p, broken), loss, 1e-5).rel, 100 * kTolerance);
    }
}

TEST(EncDecReference, AttentionIsMaskedAndNormalised) {
    EncDecProblem p = make_encdec_problem(encdec_shapes()[2], "ifo", true, false);
    ref::EncDecTrace tr = ref::encdec_forward(p.cfg, p.params, p.source, p.lengths, p.target);
    const Tensor<double> &a = tr.attention.alpha;
    double spread = 0;
    for (int64_t b = 0; b < a.dim(0); b++)
        for (int64_t t = 0; t < a.dim(1); t++) {
            double sum = 0;
            for (int64_t s = 0; s < a.dim(2); s++) {
                if (s >= p.lengths[b]) EXPECT_EQ(a(b, t, s), 0.0);
                sum += a(b, t, s);
                spread = std::max(spread, std::abs(a(b, t, s) - 1.0 / p.lengths[b]));
            }
            EXPECT_NEAR(sum, 1.0, 1e-12);
        }
    EXPECT_GT(spread, 0.01) << "attention is uniform: the test would not see the scores";
    // Changing a source step past a sequence's length changes nothing of that sequence's output.
    EncDecProblem q = p;
    for (int64_t c = 0; c < q.source.dim(2); c++) q.source(3, 1, c) += 1.0;  // sequence 1 has length 2
    ref::EncDecTrace tq = ref::encdec_forward(q.cfg, q.params, q.source, q.lengths, q.target);
    for (int64_t t = 0; t < tr.out.dim(0); t++)
        for (int64_t h = 0; h < tr.out.dim(2); h++) EXPECT_EQ(tr.out(t, 1, h), tq.out(t, 1, h));
}

TEST(EncDecReference, BadConfigurationsAreClearErrors) {
    EncDecProblem p = make_encdec_problem(encdec_shapes()[1], "fo", true, false);
    auto message = [&](const EncDecConfig &cfg, std::vector<int64_t> lengths) {
        try {
            ref::encdec_forward(cfg, p.params, p.source, lengths, p.target);
        } catch (const Error &e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EncDecConfig c = p.cfg;
    c.decoder.layers = 1;
    EXPECT_NE(message(c, p.lengths).find("decoder has 1 layers but the encoder 2"), std::string::npos);
    c = p.cfg, c.decoder.hidden = 4;
    EXPECT_NE(message(c, p.lengths).find("decoder width 4 differs from the encoder width 5"), std::string::npos);
    c = p.cfg, c.encoder.layers = 0;
    EXPECT_NE(message(c, p.lengths).find("attention needs an encoder"), std::string::npos);
    EXPECT_NE(message(p.cfg, {0, 1}).find("source length 0 of sequence 0 is outside [1, 3]"), std::string::npos);
    EXPECT_NE(message(p.cfg, {1, 4}).find("source length 4 of sequence 1 is outside [1, 3]"), std::string::npos);
    EXPECT_NE(message(p.cfg, {1}).find("got 1 source lengths for a batch of 2"), std::string::npos);
}

}  // namespace qrnn::test
