// The memory guard counts what the dense, bidirectional and encoder-decoder models hold (ModelPlugin::memory):
// measured heap in use after a model's inference or training step stays under its estimate, and above the
// plain stack's estimate the guard used before (which would have let such configs through); oversized
// configs are refused before anything is allocated.
#include <gtest/gtest.h>

#include "plugins/model.h"
#include "plugins/training_model.h"
#include "tests/support/cli.h"
#include "tests/support/heap.h"

namespace qrnn {
namespace {

using test::heap_in_use;

ModelConfig config(const std::string &model, const std::string &pass, int64_t T, int64_t B, int64_t n, int64_t m,
                   int64_t L) {
    ModelConfig cfg;
    cfg.model = model, cfg.pass = pass;
    cfg.seq = T, cfg.batch = B, cfg.input = n, cfg.hidden = m, cfg.layers = L, cfg.window = 2;
    return cfg;
}

std::unique_ptr<Model> build(const ModelConfig &cfg) {
    RunOptions opts;
    return cfg.training_pass() ? build_training_model(cfg, opts) : find_model(cfg.model).build(cfg, opts);
}

// Bytes a built model holds after one timed step (its pipelines compiled beforehand on a tiny shape of the same
// width: the training pipelines' tiles follow m, compiled_training_layer).
double held_bytes(const ModelConfig &cfg) {
    ModelConfig tiny = cfg;
    tiny.seq = 2, tiny.batch = 1, tiny.input = 3;
    build(tiny)->forward();
    const double before = heap_in_use();
    std::unique_ptr<Model> model = build(cfg);
    model->forward();
    return heap_in_use() - before;
}

struct Case {
    std::string model;
    int64_t T, B, n, m, L;
};

TEST(MemoryGuard, CountsWhatDenseBidirectionalAndEncoderDecoderHold) {
    // The plain stack as a control; weight-heavy shapes for the stacks (dense: layer l reads n + l*m; bidirectional: 2G rows, layers >= 1
    // read 2m), an activation-heavy one for the encoder-decoder ([T][S][B] attention weights).
    const Case cases[] = {{"qrnn", 2, 2, 256, 256, 4}, {"qrnn-dense", 2, 2, 256, 256, 6}, {"qrnn-bidir", 2, 2, 256, 256, 3},
                          {"encdec", 256, 16, 3, 4, 1}};
    for (const Case &c : cases) {
        for (const char *pass : {"inference", "training"}) {
            const ModelConfig cfg = config(c.model, pass, c.T, c.B, c.n, c.m, c.L);
            const double held = held_bytes(cfg);
            const ModelPlugin &plugin = find_model(c.model);
            const double estimate = estimated_run_bytes(cfg, false, plugin.memory ? plugin.memory(cfg) : MemoryShape{});
            const double plain = estimated_run_bytes(cfg, false);
            EXPECT_LE(held, estimate) << cfg.describe() << " pass " << pass;
            if (c.model != "qrnn")  // the plain stack's estimate (all the guard had before) would let it through
                EXPECT_GT(held, plain) << cfg.describe() << " pass " << pass << ": the case shows nothing";
            std::printf("%-10s %-9s held %7.2f MiB, estimate %7.2f MiB (plain stack's %6.2f MiB)\n", c.model.c_str(), pass,
                        held / (1 << 20), estimate / (1 << 20), plain / (1 << 20));
        }
    }
    // MemoryShape{} is the plain stack (its figure in tests/test_hardening_inputs.cpp).
    const ModelConfig plain = config("qrnn", "training", 256, 64, 320, 320, 1);
    EXPECT_NEAR(estimated_run_bytes(plain, false), 433.0 * (1 << 20), 0.5 * (1 << 20));
}

TEST(MemoryGuard, OversizedModelsAreRefusedBeforeAllocating) {
    using test::expect_cli;
    // Under --max-memory 600M the plain stack of the same sizes passes (--dry-run); the dense one (layer 7
    // reads 8 * 1024 channels) and the bidirectional one (2G rows, layers >= 1 read 2m) do not.
    const std::string shape = " --layers 8 --input 1024 --hidden 1024 --seq 2 --batch 1 --max-memory 600M";
    expect_cli("run --dry-run --model qrnn" + shape, 0, "1 configurations valid");
    expect_cli("run --model qrnn-dense" + shape, 2, "qrnn-dense");
    expect_cli("run --model qrnn-dense" + shape, 2, "needs about 3.38 GiB, above the memory limit 600 MiB");
    expect_cli("run --model qrnn-bidir --pass training" + shape, 2, "above the memory limit 600 MiB");
    // [T][S][B] attention weights: 64 Ki steps x 64 sequences need terabytes; refused at once (default limit).
    expect_cli("run --model encdec --seq 65536 --batch 64 --input 4 --hidden 4", 2, "above the memory limit");
}

}  // namespace
}  // namespace qrnn
