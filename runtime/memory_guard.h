// The memory guard: a run's memory estimated from its config before anything is allocated, refused when
// above a limit (`qrnn run --max-memory`, default 80% of this machine's RAM).
#pragma once
#include <cstdint>
#include <string>

#include "runtime/config.h"

namespace qrnn {

// Upper estimate in bytes of what a run allocates: per layer the weights, initial state, padded input,
// conv and gate buffers (4 gates, the most of any model), outputs, and with --pass training the tape and every
// gradient; x2 more for the double-precision
// reference when verifying. Closed form (no loop over layers), saturating instead of overflowing.
double estimated_run_bytes(const ModelConfig &cfg, bool verify);

int64_t default_memory_limit();  // 80% of the physical RAM (sysconf), at least 1 GiB

// "8G", "512M", "64K", "1.5G" or a plain byte count -> bytes; throws qrnn::Error naming option and text.
int64_t parse_memory_size(const std::string &option, const std::string &text);

std::string format_bytes(double bytes);  // "23.4 GiB"

// Throws qrnn::Error "<config>: needs about X GiB, above the memory limit Y GiB (--max-memory)" if the
// estimate exceeds limit_bytes (0: default_memory_limit()).
void check_run_memory(const ModelConfig &cfg, bool verify, int64_t limit_bytes);

}  // namespace qrnn
