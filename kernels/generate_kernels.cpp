// qrnn_kernels_gen: the generator of libqrnn_kernels (kernels/qrnn_kernels.h): the QRNN layer's forward at the
// default schedule ("tuned") for each pooling variant, compiled for several x86 targets (widest first, the last
// one the baseline) into one function per variant that picks the best target for the CPU it runs on (Halide's
// compile_multitarget), plus one Halide runtime for the baseline target. Each target gets its own pipeline, so its
// schedule fits its vector width and registers.
//   qrnn_kernels_gen OUT_DIR POOLING   OUT_DIR/qrnn_layer_<pooling>-<suffix>.o per target, the dispatch
//                                      qrnn_layer_<pooling>_wrapper.o and its header qrnn_layer_<pooling>.h
//   qrnn_kernels_gen OUT_DIR runtime   OUT_DIR/qrnn_kernels_runtime.o, for the baseline target
#include <iostream>

#include "core/error.h"
#include "schedules/schedule.h"

namespace {
using namespace qrnn;

struct KernelTarget {
    const char *target;
    const char *suffix;
};
// Spelled out: in Halide 14 avx2 implies neither fma nor f16c, and avx512 alone is only F/CD.
const KernelTarget kTargets[] = {{"x86-64-linux-avx-avx2-avx512-avx512_skylake-f16c-fma-sse41-no_runtime", "avx512"},
                                 {"x86-64-linux-avx-avx2-f16c-fma-sse41-no_runtime", "avx2"},
                                 {"x86-64-linux-sse41-no_runtime", "sse41"}};
void generate_layer(const std::string &dir, const std::string &pooling) {
    const LayerSchedule &schedule = find_layer_schedule("tuned");
    const PoolingVariant &variant = find_pooling(pooling);
    std::vector<Halide::Target> targets;
    std::vector<std::string> suffixes;
    for (const KernelTarget &t : kTargets) targets.emplace_back(t.target), suffixes.emplace_back(t.suffix);
    auto module_for = [&](const std::string &fn, const Halide::Target &target) {
        LayerInputs in;
        Halide::Pipeline p = build_layer_pipeline(schedule, in, variant, target, merge_knobs(schedule, {}, target), {});
        return p.compile_to_module(in.arguments(), fn, target);
    };
    const std::string fn = "qrnn_layer_" + pooling;
    Halide::compile_multitarget(fn, {{Halide::OutputFileType::object, dir + "/" + fn + ".o"},
                                     {Halide::OutputFileType::c_header, dir + "/" + fn + ".h"}},
                                targets, suffixes, module_for);
}
}  // namespace

int main(int argc, char **argv) {
    if (argc != 3) {
        std::cerr << "usage: qrnn_kernels_gen OUT_DIR POOLING|runtime\n";
        return 2;
    }
    try {
        const std::string dir = argv[1], what = argv[2];
        const Halide::Target baseline = Halide::Target(std::end(kTargets)[-1].target).without_feature(Halide::Target::NoRuntime);
        if (what == "runtime")
            Halide::compile_standalone_runtime(dir + "/qrnn_kernels_runtime.o", baseline);
        else
            generate_layer(dir, what);
        return 0;
    } catch (const std::exception &e) {
        std::cerr << "qrnn_kernels_gen: error: " << e.what() << "\n";
        return 2;
    }
}
