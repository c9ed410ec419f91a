// qrnn_bench_training: the training step (forward saving a tape + backward with every gradient, dx and the
// initial state's) of trainable layers (nn::make_layer) side by side in one run: each repeat runs every
// model once in turn (the load of a shared machine falls on all alike); medians, GFLOP/s of both directions.
//   qrnn_bench_training [--models lstm-onednn,lstm-halide] [--batch 16] [--seq 128] [--input 320]
//                       [--hidden 320] [--window 2] [--warmup 2] [--repeats 11]
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>

#include "core/error.h"
#include "core/streams.h"
#include "nn/layer.h"
#include "runtime/seeded_fill.h"
#include "runtime/timing.h"
#include "schedules/cpu_target.h"

namespace {
using namespace qrnn;

struct Bench {
    std::string model;
    std::unique_ptr<nn::Layer> layer;
    std::unique_ptr<nn::Tape> tape;
    Tensor<float> x, y, dy, dx;
    nn::State state, d_final, d_initial;
    Timing forward, step;
};

double elapsed_ms(const std::function<void()> &f) {
    auto start = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

int run(int argc, char **argv) {
    std::map<std::string, std::string> opt{{"models", "lstm-onednn,lstm-halide"}, {"batch", "16"}, {"seq", "128"},
                                           {"input", "320"}, {"hidden", "320"}, {"window", "2"}, {"warmup", "2"},
                                           {"repeats", "11"}};
    for (int i = 1; i < argc; i += 2) {
        std::string key = argv[i];
        if (key.rfind("--", 0) != 0 || !opt.count(key.substr(2)) || i + 1 >= argc)
            fail("unknown option or missing value: '", key, "'");
        opt[key.substr(2)] = argv[i + 1];
    }
    auto integer = [&](const char *key) {
        try {
            size_t used = 0;
            const int64_t v = std::stoll(opt[key], &used);
            if (used == opt[key].size() && v >= 1) return v;
        } catch (const std::exception &) {
        }
        fail("--", key, " must be an integer >= 1, got '", opt[key], "'");
    };
    ModelConfig cfg;
    cfg.batch = integer("batch"), cfg.seq = integer("seq"), cfg.input = integer("input"), cfg.hidden = integer("hidden");
    cfg.window = integer("window");
    const int warmup = static_cast<int>(integer("warmup")), repeats = static_cast<int>(integer("repeats"));
    const int64_t T = cfg.seq, B = cfg.batch;

    std::vector<Bench> benches;
    std::stringstream names(opt["models"]);
    for (std::string model; std::getline(names, model, ',');) {
        Bench b;
        b.model = cfg.model = model;
        b.layer = nn::make_layer(cfg, 0);
        b.tape = b.layer->make_tape();
        b.x = Tensor<float>({T, B, b.layer->input_size()});
        b.dy = Tensor<float>({T, B, b.layer->output_size()});
        seeded_fill(b.x, cfg.seed, streams::kBenchTrainingX, 1.0);
        seeded_fill(b.dy, cfg.seed, streams::kBenchTrainingDy, 1.0);
        b.d_final = b.d_initial = b.state = b.layer->initial_state(B);
        benches.push_back(std::move(b));
    }
    auto forward = [](Bench &b) {
        nn::State s = b.layer->initial_state(b.x.dim(1));
        b.layer->forward(b.x, s, b.y, nullptr);
    };
    auto step = [](Bench &b) {
        b.state = b.layer->initial_state(b.x.dim(1));
        b.layer->zero_grads();
        b.layer->forward(b.x, b.state, b.y, b.tape.get());
        b.layer->backward(*b.tape, b.dy, &b.d_final, &b.dx, &b.d_initial);
    };
    for (int i = 0; i < warmup; i++)
        for (Bench &b : benches) forward(b), step(b);
    for (int i = 0; i < repeats; i++)
        for (Bench &b : benches) {
            b.forward.ms.push_back(elapsed_ms([&] { forward(b); }));
            b.step.ms.push_back(elapsed_ms([&] { step(b); }));
        }

    std::printf("training step (forward with tape + backward), B=%lld T=%lld n=%lld m=%lld, %d repeats alternating, medians\n",
                static_cast<long long>(B), static_cast<long long>(T), static_cast<long long>(cfg.input),
                static_cast<long long>(cfg.hidden), repeats);
    std::printf("%-14s %10s %10s %10s %12s %10s %12s\n", "model", "fwd_ms", "step_ms", "step_min", "step_GFLOP/s",
                "step/fwd", "step_vs_first");
    for (Bench &b : benches) {
        const double flops = b.layer->forward_flops(T, B) + b.layer->backward_flops(T, B);
        std::printf("%-14s %10.2f %10.2f %10.2f %12.1f %10.2f %12.2f\n", b.model.c_str(), b.forward.median(),
                    b.step.median(), b.step.min(), flops / (b.step.median() * 1e6), b.step.median() / b.forward.median(),
                    b.step.median() / benches[0].step.median());
    }
    return 0;
}
}  // namespace

int main(int argc, char **argv) {
    qrnn::default_openmp_wait_policy(argv);
    qrnn::hold_references_to(Halide::get_jit_target_from_environment());  // oneDNN on the ISA Halide targets
    try {
        return run(argc, argv);
    } catch (const std::exception &e) {
        std::cerr << "qrnn_bench_training: error: " << e.what() << "\n";
        return 2;
    }
}
