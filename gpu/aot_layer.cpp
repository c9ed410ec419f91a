// qrnn_aot: ahead-of-time compiles one layer pipeline (pooling + schedule) for a Halide target, for runners
// that must not link libHalide (OpenCL on PoCL) and for inspecting device code (CUDA PTX for ptxas).
//   qrnn_aot layer SCHEDULE POOLING TARGET FUNCTION OUT_PREFIX [static_library|llvm_assembly] [T,B,n,m,k]
//   qrnn_aot runtime TARGET OUT_PREFIX
// Function arguments, in order: x, history, weights, bias, c0 (buffers, layout core/layout.h), time_offset,
// dropout_key, dropout_threshold, dropout_scale, zoneout_key, zoneout_threshold, then outputs c and h.
// Per-shape schedules (autoschedulers) use the estimates of the given shape (default: the paper's
// T=128 B=16 n=m=320 k=2); their pipelines may reject much smaller shapes (tiles shifted inwards).
#include <cstdio>
#include <iostream>

#include "core/error.h"
#include "schedules/schedule.h"

int main(int argc, char **argv) {
    using namespace qrnn;
    std::vector<std::string> a(argv + 1, argv + argc);
    try {
        if (a.size() == 3 && a[0] == "runtime") {
            Halide::compile_standalone_runtime(a[2] + ".a", Halide::Target(a[1]));
            return 0;
        }
        if (a.size() >= 6 && a.size() <= 8 && a[0] == "layer") {
            LayerShape shape{128, 16, 320, 320, 2};
            if (a.size() == 8 &&
                std::sscanf(a[7].c_str(), "%ld,%ld,%ld,%ld,%ld", &shape.T, &shape.B, &shape.n, &shape.m, &shape.k) != 5)
                fail("shape '", a[7], "' is not T,B,n,m,k");
            const LayerSchedule &s = find_layer_schedule(a[1]);
            LayerInputs in;
            Halide::Target target(a[3]);
            Halide::Pipeline p = build_layer_pipeline(s, in, find_pooling(a[2]), target, merge_knobs(s, {}, target),
                                                      shape);
            std::vector<Halide::Argument> args{in.x,           in.history,          in.weights,
                                               in.bias,        in.c0,               in.time_offset,
                                               in.dropout_key, in.dropout_threshold, in.dropout_scale,
                                               in.zoneout_key, in.zoneout_threshold};
            std::string kind = a.size() >= 7 ? a[6] : "static_library";
            if (kind == "static_library")
                p.compile_to_static_library(a[5], args, a[4], target);
            else if (kind == "llvm_assembly")
                p.compile_to_llvm_assembly(a[5] + ".ll", args, a[4], target);
            else
                fail("unknown output kind '", kind, "' (static_library, llvm_assembly)");
            return 0;
        }
        std::cerr << "usage: qrnn_aot layer SCHEDULE POOLING TARGET FUNCTION OUT_PREFIX [static_library|llvm_assembly] "
                     "[T,B,n,m,k]\n"
                     "       qrnn_aot runtime TARGET OUT_PREFIX\n";
        return 2;
    } catch (const std::exception &e) {
        std::cerr << "qrnn_aot: error: " << e.what() << "\n";
        return 2;
    }
}
