// The memory guard: a run's memory estimated from its config before anything is allocated, refused when
// above a limit (`qrnn run --max-memory`, default 80% of this machine's RAM).
#pragma once
#include <cstdint>
#include <string>

#include "runtime/config.h"

namespace qrnn {

// How a model's stacks differ from the plain QRNN stack, for the estimate (a model plugin describes itself:
// ModelPlugin::memory, plugins/model.h). Layer l of each stack reads input + l * input_growth channels for
// l = 0, later_input + l * input_growth for l >= 1 (plain: later_input = hidden, growth 0; dense: input and
// hidden), with `directions` scans sharing its conv (gate rows, conv buffers, outputs and states x directions).
struct MemoryShape {
    double stacks = 1;          // e.g. 2: encoder and decoder
    double directions = 1;      // 2: bidirectional
    double later_input = -1;    // < 0: hidden
    double input_growth = 0;    // dense: hidden
    // Weight-sized tensors held outside a training step: the weights and the compiled layer's copy (measured,
    // tests/test_memory_guard_models.cpp); nn::Layer models (dense, bidirectional, encdec) also the gradient.
    double weight_copies = 2;
    double extra_floats = 0;    // what the model holds besides its stacks' layers (training and inference as asked)
};

// Upper estimate in bytes of what a run allocates: per layer the weights, initial state, padded input,
// conv and gate buffers (4 gates, the most of any model), outputs, and with --pass training the tape, every
// gradient and the backward's scratch, over every layer of every stack, plus the model's extra floats; x2 more for the double-precision
// reference when verifying. Closed form (no loop over layers), saturating instead of overflowing.
double estimated_run_bytes(const ModelConfig &cfg, bool verify, const MemoryShape &shape = {});

int64_t default_memory_limit();  // 80% of the physical RAM (sysconf), at least 1 GiB

// "8G", "512M", "64K", "1.5G" or a plain byte count -> bytes; throws qrnn::Error naming option and text.
int64_t parse_memory_size(const std::string &option, const std::string &text);

std::string format_bytes(double bytes);  // "23.4 GiB"

// Throws qrnn::Error "<config>: needs about X GiB, above the memory limit Y GiB (--max-memory)" if the
// estimate exceeds limit_bytes (0: default_memory_limit()).
void check_run_memory(const ModelConfig &cfg, bool verify, int64_t limit_bytes, const MemoryShape &shape = {});

}  // namespace qrnn
