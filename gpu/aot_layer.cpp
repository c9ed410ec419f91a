// qrnn_aot: ahead-of-time compiles one layer pipeline (pooling + schedule) for a Halide target, for runners
// that must not link libHalide (OpenCL on PoCL) and for inspecting device code (CUDA PTX for ptxas).
//   qrnn_aot layer SCHEDULE POOLING TARGET FUNCTION OUT_PREFIX [static_library|llvm_assembly] [T,B,n,m,k]
//   qrnn_aot runtime TARGET OUT_PREFIX
//   qrnn_aot training-forward|training-backward SCHEDULE POOLING TARGET FUNCTION OUT_PREFIX [kind]
//     the pipelines of a training schedule (schedules/training_schedule.h); backward arguments: the
//     forward's, then tape gates, tape c, dh, dc_final; outputs: dweights, dbias, dx, dhistory, dc0.
//   qrnn_aot seq-forward|seq-backward SCHEDULE POOLING 1|2|2sum TARGET FUNCTION OUT_PREFIX [kind]
//     the variable-length / bidirectional layer's pipelines (schedules/seq_schedule.h), 1 or 2 directions.
//   qrnn_aot decoder-forward|decoder-backward SCHEDULE POOLING TARGET FUNCTION OUT_PREFIX [kind]
//     the same for the encoder-decoder's attention layer (nn/encoder_decoder.h): batch_bias input (forward),
//     dgates input and dbatch_bias output (backward), the pooling's cell_output_variant.
//   qrnn_aot attention-forward|attention-backward TARGET FUNCTION OUT_PREFIX [kind]
//     the attention pipelines (core/attention.h, schedules/attention_schedule.h).
//   qrnn_aot condition-forward|condition-backward TARGET FUNCTION OUT_PREFIX [kind]
//     the decoder's conditioning V_l h~^l (core/condition.h, schedules/condition_schedule.h).
// Function arguments: LayerInputs::arguments() (core/qrnn_layer.h: x, history, weights, bias, c0, then the
// time offset and mask parameters), then the outputs c and h.
// Per-shape schedules (autoschedulers) use the estimates of the given shape (default: the paper's
// T=128 B=16 n=m=320 k=2); their pipelines may reject much smaller shapes (tiles shifted inwards).
#include <cstdio>
#include <iostream>

#include "core/attention.h"
#include "core/error.h"
#include "schedules/attention_schedule.h"
#include "schedules/condition_schedule.h"
#include "schedules/schedule.h"
#include "schedules/seq_schedule.h"
#include "schedules/training_schedule.h"

namespace {
using namespace qrnn;
using Args = std::vector<std::string>;

void emit(Halide::Pipeline &p, const std::vector<Halide::Argument> &args, const std::string &function,
          const std::string &prefix, const std::string &kind, const Halide::Target &target) {
    if (kind == "static_library")
        p.compile_to_static_library(prefix, args, function, target);
    else if (kind == "llvm_assembly")
        p.compile_to_llvm_assembly(prefix + ".ll", args, function, target);
    else
        fail("unknown output kind '", kind, "' (static_library, llvm_assembly)");
}

// The POOLING argument's variant: the command line is the edge where a name is resolved.
const PoolingVariant &pooling_arg(const std::string &name) { return find_pooling(name); }

// The output kind at argument `i`, static_library when absent.
std::string kind_at(const Args &a, size_t i) { return a.size() > i ? a[i] : "static_library"; }

// Each command below returns false when the arguments are not its own (then the next one is tried).
bool runtime_command(const Args &a) {
    if (!(a.size() == 3 && a[0] == "runtime")) return false;
    Halide::compile_standalone_runtime(a[2] + ".a", Halide::Target(a[1]));
    return true;
}

bool layer_command(const Args &a) {
    if (!(a.size() >= 6 && a.size() <= 8 && a[0] == "layer")) return false;
    LayerShape shape{128, 16, 320, 320, 2};
    if (a.size() == 8 && std::sscanf(a[7].c_str(), "%ld,%ld,%ld,%ld,%ld", &shape.T, &shape.B, &shape.n, &shape.m, &shape.k) != 5)
        fail("shape '", a[7], "' is not T,B,n,m,k");
    const LayerSchedule &s = find_layer_schedule(a[1]);
    LayerInputs in;
    Halide::Target target(a[3]);
    Halide::Pipeline p = build_layer_pipeline(s, in, pooling_arg(a[2]), target, merge_knobs(s, {}, target), shape);
    emit(p, in.arguments(), a[4], a[5], kind_at(a, 6), target);
    return true;
}

// training-forward|training-backward and decoder-forward|decoder-backward (the attention layer's).
bool training_command(const Args &a) {
    const bool decoder = !a.empty() && (a[0] == "decoder-forward" || a[0] == "decoder-backward");
    if (!((a.size() == 6 || a.size() == 7) && (decoder || a[0] == "training-forward" || a[0] == "training-backward")))
        return false;
    const TrainingSchedule &s = find_training_schedule(a[1]);
    const PoolingVariant &variant = decoder ? cell_output_variant(pooling_arg(a[2])) : pooling_arg(a[2]);
    Halide::Target target(a[3]);
    if (a[0] == "training-forward" || a[0] == "decoder-forward") {
        LayerInputs in;
        in.with_batch_bias = decoder;
        Halide::Pipeline p = build_training_forward(s, in, variant, target, merge_knobs(s, {}, target));
        emit(p, in.arguments(), a[4], a[5], kind_at(a, 6), target);
    } else {
        BackwardInputs in;
        in.fwd.with_batch_bias = in.with_gate_grads = decoder;
        Halide::Pipeline p = build_training_backward(s, in, variant, target, merge_knobs(s, {}, target));
        emit(p, in.arguments(), a[4], a[5], kind_at(a, 6), target);
    }
    return true;
}

bool seq_command(const Args &a) {
    if (!((a.size() == 7 || a.size() == 8) && (a[0] == "seq-forward" || a[0] == "seq-backward"))) return false;
    const SeqSchedule &s = find_seq_schedule(a[1]);
    const PoolingVariant &variant = pooling_arg(a[2]);
    if (a[3] != "1" && a[3] != "2" && a[3] != "2sum") fail("directions '", a[3], "' is not 1, 2 or 2sum");
    const SeqOptions options{a[3] == "1" ? 1 : 2, a[3] == "2sum"};
    Halide::Target target(a[4]);
    if (a[0] == "seq-forward") {
        SeqInputs in;
        Halide::Pipeline p = build_seq_forward(s, in, variant, options, target, seq_schedule_knobs(s, 0, target));
        emit(p, in.arguments(), a[5], a[6], kind_at(a, 7), target);
    } else {
        SeqBackwardInputs in;
        Halide::Pipeline p = build_seq_backward(s, in, variant, options, target, seq_schedule_knobs(s, 0, target));
        emit(p, in.arguments(), a[5], a[6], kind_at(a, 7), target);
    }
    return true;
}

bool attention_command(const Args &a) {
    if (!((a.size() == 4 || a.size() == 5) && (a[0] == "attention-forward" || a[0] == "attention-backward"))) return false;
    Halide::Target target(a[1]);
    if (a[0] == "attention-forward") {
        AttentionInputs in;
        Halide::Pipeline p = build_attention_forward(in, target);
        emit(p, in.arguments(), a[2], a[3], kind_at(a, 4), target);
    } else {
        AttentionBackwardInputs in;
        Halide::Pipeline p = build_attention_backward(in, target);
        emit(p, in.arguments(), a[2], a[3], kind_at(a, 4), target);
    }
    return true;
}

bool condition_command(const Args &a) {
    if (!((a.size() == 4 || a.size() == 5) && (a[0] == "condition-forward" || a[0] == "condition-backward"))) return false;
    Halide::Target target(a[1]);
    ConditionBackwardInputs in;
    const bool forward = a[0] == "condition-forward";
    Halide::Pipeline p = forward ? build_condition_forward(in.fwd, target) : build_condition_backward(in, target);
    emit(p, forward ? in.fwd.arguments() : in.arguments(), a[2], a[3], kind_at(a, 4), target);
    return true;
}

void print_usage() {
    std::cerr << "usage: qrnn_aot layer SCHEDULE POOLING TARGET FUNCTION OUT_PREFIX [static_library|llvm_assembly] "
                 "[T,B,n,m,k]\n"
                 "       qrnn_aot runtime TARGET OUT_PREFIX\n"
                 "       qrnn_aot training-forward|training-backward SCHEDULE POOLING TARGET FUNCTION OUT_PREFIX "
                 "[static_library|llvm_assembly]\n"
                 "       qrnn_aot seq-forward|seq-backward SCHEDULE POOLING 1|2|2sum TARGET FUNCTION OUT_PREFIX "
                 "[static_library|llvm_assembly]\n"
                 "       qrnn_aot decoder-forward|decoder-backward SCHEDULE POOLING TARGET FUNCTION OUT_PREFIX "
                 "[static_library|llvm_assembly]\n"
                 "       qrnn_aot attention-forward|attention-backward TARGET FUNCTION OUT_PREFIX "
                 "[static_library|llvm_assembly]\n"
                 "       qrnn_aot condition-forward|condition-backward TARGET FUNCTION OUT_PREFIX "
                 "[static_library|llvm_assembly]\n";
}
}  // namespace

int main(int argc, char **argv) {
    const Args a(argv + 1, argv + argc);
    try {
        for (auto *command : {runtime_command, layer_command, training_command, seq_command, attention_command, condition_command})
            if (command(a)) return 0;
        print_usage();
        return 2;
    } catch (const std::exception &e) {
        std::cerr << "qrnn_aot: error: " << e.what() << "\n";
        return 2;
    }
}
