// The Halide target of a config's target string, resolved once where a model or pipeline is built and passed down
// as a Halide::Target (the config keeps the user's string: the CLI, sweeps and reports read it without Halide).
#pragma once
#include <Halide.h>
#include <string>

namespace qrnn {

// The Halide target named by a target string (empty: the host JIT target); throws on a malformed one.
// Also refuses (require_runnable_target) a target this machine cannot run, before anything is JIT-compiled.
Halide::Target parse_target(const std::string &target);
// Throws qrnn::Error naming `text` when t's architecture, bits or OS differ from the host's, or t asks for a CPU
// feature (AVX2, AVX512, SVE...) the host lacks (JIT code for another machine crashes or dies of SIGILL).
void require_runnable_target(const std::string &text, const Halide::Target &t);

}  // namespace qrnn
