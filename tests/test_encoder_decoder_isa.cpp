// The float encoder-decoder against the double reference (as tests/test_encoder_decoder.cpp) on every CPU
// target narrower than the host that this machine runs (schedules/cpu_target.h: SSE4.1, AVX2), pooling ifo
// with attention and masks (the most code), on one awkward shape per target (its pipelines compile per shape and
// target, about half a minute each). The host target, on every shape: the other file's.
#include <gtest/gtest.h>

#include <iostream>

#include "schedules/cpu_target.h"
#include "tests/support/encdec_problem.h"

namespace qrnn::test {

TEST(EncoderDecoderIsa, MatchesReferenceOnNarrowerCpuTargets) {
    const Halide::Target host = Halide::get_host_target();
    // k > T with 2 layers and a length-1 source; T > S with variable lengths.
    const EncDecShape shapes[] = {encdec_shapes()[1], encdec_shapes()[2]};
    int ran = 0;
    for (const Halide::Target &target : runnable_cpu_targets()) {
        if (target_isa(target) == target_isa(host)) continue;
        EncDecProblem p = make_encdec_problem(shapes[ran % 2], "ifo", true, true);
        Worst w = float_vs_reference(p, target.to_string());
        EXPECT_LE(w.rel, 2e-4) << target.to_string() << " " << p.cfg.describe() << ": worst " << w.name;
        std::cout << target.to_string() << " " << p.cfg.describe() << ": worst rel err float vs double " << w.rel << " (" << w.name << ")\n";
        ran++;
    }
    EXPECT_GE(ran, 1) << "no narrower target: SSE4.1 runs on every x86-64 CPU this project supports";
}

}  // namespace qrnn::test
