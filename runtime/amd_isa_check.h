// Halide 14 compiles its avx512_sapphirerapids feature (the bf16 and int8 dot products) for LLVM's sapphirerapids
// CPU, which also has AVX512-FP16 and AVX-VNNI. AMD's Zen 4 has neither and Zen 5 lacks AVX512-FP16, yet both run
// the dot products and Halide sets the feature for them. LLVM uses those extensions unasked (a gather of 16-bit
// lanes starts with vmovw, AVX512-FP16), and each is a SIGILL there. The schedules avoid what produced them; the
// kernel cache checks every object it compiles for the feature (runtime/kernel.cpp) and, should one hold such an
// instruction, compiles it without the feature instead (correct, slower: docs/precision.md).
#pragma once
#include <string>
#include <vector>

namespace qrnn {

// The instructions in assembly text (LLVM's or objdump's) that AMD's Zen 4 or 5 lack: AVX512-FP16 (vmovw, the
// ...ph / ...sh arithmetic; not F16C's vcvtph2ps / vcvtps2ph) and AVX-VNNI (vpdpbusd and its kin VEX-encoded, printed
// "{vex}"), in order.
std::vector<std::string> instructions_amd_lacks(const std::string &assembly);

// The first of them in an object file, read with objdump; "" when there is none or objdump cannot be run.
std::string first_instruction_amd_lacks(const std::string &object_file);

}  // namespace qrnn
