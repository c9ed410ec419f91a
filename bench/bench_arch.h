// `qrnn bench --what arch`: the architectures of issue 11 against the plain QRNN layer doing the same arithmetic,
// each run through the nn::Layer its model uses (`forward`: no tape, as `qrnn run` infers; `step`: forward with
// a tape + backward with dx, as `qrnn train`). At one shape (T, B, n, m, k):
//   dense   nn::DenseQrnn of 3 layers (layer l reads channels [0, n + l*m) of one buffer in place, writes its h
//           into it) vs 3 plain nn::QrnnLayer of input widths n, n+m, n+2m, each given its input as one contiguous
//           tensor (the real concatenations, built once outside the timing; the same parameters, outputs checked)
//   bidir   nn::SeqQrnnLayer with two directions, outputs concatenated or summed, vs one plain layer of 2m units:
//           the same conv GEMM (2*G*m columns, K = k*n), scan bytes (2m channels) and gradient sizes
//   varlen  nn::SeqQrnnLayer, one direction: every length T (the same parameters as the plain layer of m units,
//           outputs checked equal) or seeded random lengths in [1, T] (less work: for information)
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nn/layer.h"
#include "schedules/schedule.h"

namespace qrnn::bench {

// One layer on fixed seeded data: its forward (no tape) and its training step (forward with a tape, then
// backward with dx), each from a state at time 0 (the bidirectional layer refuses any other). Constructing it
// runs one forward from the zero state (y: what the checks compare).
struct LayerDriver {
    std::unique_ptr<nn::Layer> layer;
    Tensor<float> x, y, dy, dx;
    nn::State state;
    std::unique_ptr<nn::Tape> tape;
    LayerDriver(std::unique_ptr<nn::Layer> l, Tensor<float> input);
    void forward();
    void step();
};

// A plain QRNN layer (nn::QrnnLayer, model "qrnn") of shape s in `precision` on seeded data, for `target` ("" = host).
std::unique_ptr<LayerDriver> qrnn_layer_driver(const std::string &pooling, const LayerShape &s, const std::string &target,
                                               Precision precision);

struct ArchComparison {
    std::string name;   // e.g. "dense stack (3 layers)"
    std::string plain;  // the plain side, e.g. "plain layers n, n+m, n+2m (contiguous inputs)"
    size_t plain_forward, plain_step, forward, step;  // indices into ArchBench::runs
};

struct ArchBench {
    std::vector<std::function<void()>> runs;  // every distinct callable once (time them interleaved)
    std::vector<ArchComparison> comparisons;
    std::shared_ptr<void> owner;  // the layers and tensors the runs use
};

// Every comparison at shape s, built (pipelines JIT-compiled) for `target` ("" = host). Throws qrnn::Error if a
// side that must compute what the plain side computes does not (max relative difference above 1e-4).
ArchBench arch_bench(const std::string &pooling, const LayerShape &s, const std::string &target);

}  // namespace qrnn::bench
