// The language model's decoder (fused linear + log-softmax + cross-entropy + gradient) and embedding:
// the double reference against central finite differences (loss vs h, weights, bias and the embedding
// table); the Halide decoder against the reference (rel <= 1e-4) on awkward shapes on every CPU target this
// machine runs (host and narrower); a deliberately wrong gradient fails both checks; bad ids are errors.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "core/error.h"
#include "lm/softmax_decoder.h"
#include "runtime/target.h"
#include "reference/softmax_decoder.h"
#include "runtime/compare.h"
#include "schedules/cpu_target.h"
#include "tests/support/finite_differences.h"

namespace qrnn::test {
namespace {
constexpr double kFdTolerance = 1e-6, kTolerance = 1e-4;

struct Shape {
    int64_t N, m, V;
};

std::vector<int32_t> seeded_ids(int64_t count, int64_t vocab, uint32_t seed) {
    Tensor<double> u = seeded_tensor({count}, seed, 9, 1.0);
    std::vector<int32_t> ids(count);
    for (int64_t i = 0; i < count; i++)
        ids[i] = std::min<int32_t>(static_cast<int32_t>((u.data[i] + 1) / 2 * vocab), static_cast<int32_t>(vocab - 1));
    return ids;
}

struct Problem {
    Tensor<double> h, weights, bias;
    std::vector<int32_t> targets;
};
Problem make_problem(const Shape &s, uint32_t seed, double scale = 1.0) {
    return {seeded_tensor({s.N, s.m}, seed, 1, scale), seeded_tensor({s.V, s.m}, seed, 2, scale),
            seeded_tensor({s.V}, seed, 3, scale), seeded_ids(s.N, s.V, seed)};
}

double decoder_loss(const Problem &p) { return ref::softmax_decoder(p.h, p.targets, p.weights, p.bias, false).loss; }

// The reference's gradients against central finite differences; `corrupt` alters them first.
double reference_fd_error(const Shape &s, const std::function<void(ref::DecoderResult &)> &corrupt = {}) {
    Problem p = make_problem(s, 11);
    ref::DecoderResult r = ref::softmax_decoder(p.h, p.targets, p.weights, p.bias);
    if (corrupt) corrupt(r);
    FdWorst worst = finite_difference_check({{"h", {&p.h, &r.dh}}, {"weights", {&p.weights, &r.dweights}}, {"bias", {&p.bias, &r.dbias}}},
                                            [&] { return decoder_loss(p); });
    return worst.rel;
}

const Shape kShapes[] = {{1, 1, 1}, {1, 3, 2}, {2, 5, 7}, {7, 3, 17}, {4, 9, 33}};
}  // namespace

TEST(SoftmaxDecoderReference, MatchesFiniteDifferences) {
    for (const Shape &s : kShapes) EXPECT_LE(reference_fd_error(s), kFdTolerance) << s.N << "x" << s.m << " V=" << s.V;
}

TEST(SoftmaxDecoderReference, WrongGradientsFail) {
    const Shape s{4, 5, 7};
    // softmax without the one-hot, and a dh off by 0.1%: both must fail the check.
    EXPECT_GT(reference_fd_error(s, [](ref::DecoderResult &r) { r.dbias.data[0] += 1; }), 1e-2);
    EXPECT_GT(reference_fd_error(s, [](ref::DecoderResult &r) { r.dh.data[3] *= 1.001; }), kFdTolerance);
}

TEST(SoftmaxDecoderReference, LossIsStableForHugeLogits) {
    Problem p = make_problem({3, 4, 5}, 3, 1.0);
    for (double &w : p.weights.data) w *= 1e3;  // logits ~ 1e3: exp overflows without the max subtracted
    ref::DecoderResult r = ref::softmax_decoder(p.h, p.targets, p.weights, p.bias);
    EXPECT_TRUE(std::isfinite(r.loss));
    for (double d : r.dh.data) EXPECT_TRUE(std::isfinite(d));
}

TEST(EmbeddingReference, ChainThroughDecoderMatchesFiniteDifferences) {
    // loss(table) = decoder(embedding(table, tokens)): dtable = embedding_backward(tokens, dh); tokens repeat.
    const int64_t V = 6, m = 4, N = 9;
    Tensor<double> table = seeded_tensor({V, m}, 5, 4);
    std::vector<int32_t> tokens = seeded_ids(N, 3, 5), targets = seeded_ids(N, V, 6);  // ids < 3: repeats, unused rows
    Problem p = make_problem({N, m, V}, 7);
    auto loss = [&] { return ref::softmax_decoder(ref::embedding_forward(table, tokens), targets, p.weights, p.bias, false).loss; };
    ref::DecoderResult r = ref::softmax_decoder(ref::embedding_forward(table, tokens), targets, p.weights, p.bias);
    Tensor<double> dtable = ref::embedding_backward(tokens, r.dh, V);
    EXPECT_LE(finite_difference_error(table, dtable, loss), kFdTolerance);
    dtable.data[1] += 1e-3;  // a wrong gradient fails
    EXPECT_GT(finite_difference_error(table, dtable, loss), kFdTolerance);
}

namespace {
struct HalideErrors {
    double loss = 0, row = 0, dh = 0, dweights = 0, dbias = 0;
    double worst() const { return std::max({loss, row, dh, dweights, dbias}); }
};

// The Halide decoder on target against the reference: the loss, each row's loss, dh, and the gradients
// accumulated onto non-zero initial values; chunk 0: the default chunking. `corrupt` alters the Halide dh before the comparison.
HalideErrors halide_vs_reference(const Shape &s, const std::string &target, int64_t chunk,
                                 const std::function<void(Tensor<float> &)> &corrupt = {},
                                 Precision precision = Precision::f32) {
    Problem p = make_problem(s, 21, 0.5);
    ref::DecoderResult r = ref::softmax_decoder(p.h, p.targets, p.weights, p.bias, true, precision);
    lm::SoftmaxDecoder decoder(s.V, s.m, parse_target(target), precision);
    if (chunk > 0) decoder.set_chunk_rows(chunk);
    const Tensor<float> h = convert<float>(p.h), w = convert<float>(p.weights), b = convert<float>(p.bias);
    lm::DecoderGrads grads{convert<float>(seeded_tensor({s.V, s.m}, 21, 5)), convert<float>(seeded_tensor({s.V}, 21, 6))};
    Tensor<double> dw_expected = convert<double>(grads.dweights), db_expected = convert<double>(grads.dbias);
    for (size_t i = 0; i < dw_expected.size(); i++) dw_expected.data[i] += r.dweights.data[i];
    for (size_t i = 0; i < db_expected.size(); i++) db_expected.data[i] += r.dbias.data[i];
    Tensor<float> dh;
    HalideErrors e;
    const double loss = decoder.loss(h, p.targets, w, b, &dh, &grads);
    if (corrupt) corrupt(dh);
    e.loss = std::abs(loss - r.loss) / std::max(1.0, std::abs(r.loss));
    e.dh = compare(dh, r.dh).rel();
    e.dweights = compare(grads.dweights, dw_expected).rel();
    e.dbias = compare(grads.dbias, db_expected).rel();
    std::vector<float> rows = decoder.row_losses(h, p.targets, w, b);
    Tensor<float> rows_t({s.N});
    rows_t.data.assign(rows.begin(), rows.end());
    Tensor<double> ref_rows({s.N});
    ref_rows.data.assign(r.row_loss.begin(), r.row_loss.end());
    e.row = compare(rows_t, ref_rows).rel();
    const double eval_loss = decoder.loss(h, p.targets, w, b);  // evaluation pipeline: the same loss
    e.loss = std::max(e.loss, std::abs(eval_loss - r.loss) / std::max(1.0, std::abs(r.loss)));
    return e;
}

// N = 1, V = 1, widths odd and below / not a multiple of the tile, V not a multiple of the vector or tile,
// rows over several chunks with a partial last one; {130, 64, 530}: several panels of rows and of hidden units in
// dhidden. The weights read in place (lm/softmax_decoder.cpp, exactly V rows: a read past them is an error) at
// m = 32, 64 and 128 (V = 8 and 17: the last logits tile past V reads row V - 1). dhidden's K blocks (V past
// panel_bytes / (4 MR)): DefaultChunksMatchReference's V = 100000.
const Shape kHalideShapes[] = {{1, 1, 1},  {1, 5, 3},     {3, 1, 2},      {7, 3, 17}, {37, 19, 100},
                               {70, 33, 301}, {130, 64, 530}, {9, 32, 8}, {5, 32, 17}, {23, 128, 45}};
}  // namespace

TEST(SoftmaxDecoderHalide, MatchesReferenceOnEveryCpuTarget) {
    double worst = 0;
    for (const Halide::Target &target : runnable_cpu_targets())
        for (const Shape &s : kHalideShapes)
            for (int64_t chunk : {int64_t{512}, int64_t{32}}) {
                HalideErrors e = halide_vs_reference(s, target.to_string(), chunk);
                EXPECT_LE(e.worst(), kTolerance) << target.to_string() << " N=" << s.N << " m=" << s.m << " V=" << s.V
                                                 << " chunk=" << chunk << ": loss " << e.loss << " rows " << e.row << " dh "
                                                 << e.dh << " dweights " << e.dweights << " dbias " << e.dbias;
                worst = std::max(worst, e.worst());
            }
    std::cout << "Halide decoder vs double reference, worst rel err over every target and shape: " << worst << "\n";
}

// bf16 (docs/precision.md) against the reference whose GEMM operands are rounded alike: dlogits is float32 here and
// double there, so some round a bf16 step apart (the gradients' bound is looser than float32's; measured 1.9e-4).
TEST(SoftmaxDecoderHalide, Bf16MatchesTheRoundedReference) {
    double worst_loss = 0, worst_grads = 0;
    for (const Shape &s : kHalideShapes)
        for (int64_t chunk : {int64_t{512}, int64_t{32}}) {
            HalideErrors e = halide_vs_reference(s, "", chunk, {}, Precision::bf16);
            EXPECT_LE(std::max(e.loss, e.row), kTolerance) << "N=" << s.N << " m=" << s.m << " V=" << s.V << " chunk=" << chunk;
            EXPECT_LE(e.worst(), 1e-3) << "N=" << s.N << " m=" << s.m << " V=" << s.V << " chunk=" << chunk << ": dh " << e.dh
                                       << " dweights " << e.dweights << " dbias " << e.dbias;
            worst_loss = std::max({worst_loss, e.loss, e.row}), worst_grads = std::max(worst_grads, e.worst());
        }
    std::cout << "bf16 decoder vs the rounded reference: loss " << worst_loss << ", every output " << worst_grads << "\n";
}

TEST(SoftmaxDecoderHalide, DefaultChunksMatchReference) {
    // N = 700: three chunks of whole logits panels, the last partial; V = 100000: fewer rows per chunk (the
    // logits' cap), still whole panels.
    for (const Halide::Target &target : runnable_cpu_targets())
        for (const Shape &s : {Shape{700, 19, 37}, Shape{300, 3, 100000}}) {
            HalideErrors e = halide_vs_reference(s, target.to_string(), 0);
            EXPECT_LE(e.worst(), kTolerance) << target.to_string() << " N=" << s.N << " m=" << s.m << " V=" << s.V;
        }
}

TEST(SoftmaxDecoderHalide, WrongGradientFails) {
    HalideErrors e = halide_vs_reference({7, 3, 17}, runnable_cpu_targets().back().to_string(), 512, [](Tensor<float> &dh) { dh.data[4] += 1e-2f; });
    EXPECT_GT(e.dh, kTolerance);
}

TEST(SoftmaxDecoderHalide, HugeLogitsStayFinite) {
    lm::SoftmaxDecoder decoder(5, 4, runnable_cpu_targets().back());
    Tensor<float> h({2, 4}, 1.0f), w({5, 4}, 0.0f), b({5}, 0.0f), dh;
    for (int k = 0; k < 4; k++) w(0, k) = 500.0f, w(1, k) = 499.0f;  // logits 2000 and 1996
    lm::DecoderGrads g;
    const double loss = decoder.loss(h, {0, 1}, w, b, &dh, &g);
    const double expected = std::log1p(std::exp(-4.0)) + (4.0 + std::log1p(std::exp(-4.0)));
    EXPECT_NEAR(loss, expected, 1e-3);
    for (float d : dh.data) EXPECT_TRUE(std::isfinite(d));
}

TEST(SoftmaxDecoderHalide, BadInputIsAnErrorNamingIt) {
    lm::SoftmaxDecoder decoder(10, 4);
    Tensor<float> h({3, 4}), w({10, 4}), b({10});
    auto message = [&](const std::vector<int32_t> &targets, const Tensor<float> &hh, const Tensor<float> &ww) {
        try {
            decoder.loss(hh, targets, ww, b);
        } catch (const Error &e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message({0, 10, 2}, h, w).find("target id 10 at position 1 is outside the vocabulary [0, 10)"), std::string::npos);
    EXPECT_NE(message({0, -3, 2}, h, w).find("target id -3"), std::string::npos);
    EXPECT_NE(message({0, 1}, h, w).find("2 targets for 3 rows"), std::string::npos);
    EXPECT_NE(message({0, 1, 2}, h, Tensor<float>({10, 5})).find("weights has shape [10][5], expected [10][4]"), std::string::npos);
    EXPECT_NE(message({0, 1, 2}, Tensor<float>({3, 5}), w).find("h has shape [3][5]"), std::string::npos);
}

TEST(Embedding, MatchesReferenceAndAccumulatesInOrder) {
    const int64_t V = 7, m = 5;
    std::vector<int32_t> tokens{3, 0, 3, 6, 3, 1};  // [T=3][B=2], repeats
    Tensor<double> table = seeded_tensor({V, m}, 8, 1), dx = seeded_tensor({3, 2, m}, 8, 2);
    Tensor<float> x({3, 2, m});
    lm::embedding_forward(convert<float>(table), tokens, x);
    Tensor<double> x_ref = ref::embedding_forward(table, tokens);
    x_ref.shape = x.shape;
    EXPECT_LE(compare(x, x_ref).rel(), 1e-7);
    Tensor<double> dtable_init = seeded_tensor({V, m}, 8, 3), expected = ref::embedding_backward(tokens, dx, V);
    for (size_t i = 0; i < expected.size(); i++) expected.data[i] += dtable_init.data[i];
    Tensor<float> dtable = convert<float>(dtable_init), again = dtable;
    lm::embedding_backward(tokens, convert<float>(dx), dtable);
    EXPECT_LE(compare(dtable, expected).rel(), 1e-6);
    lm::embedding_backward(tokens, convert<float>(dx), again);
    EXPECT_EQ(dtable.data, again.data);  // deterministic
    try {
        lm::embedding_forward(convert<float>(table), {0, 7, 1, 1, 1, 1}, x);
        ADD_FAILURE() << "no error for token 7";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("token id 7 at position 1 is outside the vocabulary [0, 7)"), std::string::npos) << e.what();
    }
}

}  // namespace qrnn::test
