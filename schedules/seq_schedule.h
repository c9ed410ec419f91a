// Schedules of the variable-length / bidirectional layer (core/qrnn_seq.h), by name like the training
// schedules: "naive" (compute_root, scalar: the reference point) and "tuned" (CPU: the plain layer's gates
// GEMM with the activation epilogue and serial scans; backward: scans, then dW, dbias and dx by the plain
// layer's blocked GEMM schedule, schedules/cpu_backward.h),
// "cuda-tiled" (GPU: every stage a tiled kernel; compiled and PTX-assembled, tests/test_gpu_ptxas_seq.py).
#pragma once
#include "core/qrnn_seq.h"
#include "schedules/training_schedule.h"

namespace qrnn {

struct SeqSchedule {
    std::string name, description, target_family;  // "cpu" or "gpu"
    std::function<void(SeqFuncs &, const SeqInputs &, const Halide::Target &)> apply_forward;
    std::function<void(SeqBackwardFuncs &, const SeqBackwardInputs &, const Halide::Target &)> apply_backward;
    std::function<TapePadding(const Halide::Target &)> tape_padding;  // unset: no padding
};

void register_seq_schedule(SeqSchedule schedule);
// Throws qrnn::Error "unknown variable-length/bidirectional schedule 'X' (known: ...)".
const SeqSchedule &find_seq_schedule(const std::string &name);
std::vector<std::string> seq_schedule_names();

// Forward: outputs SeqFuncs::outputs() (the scans, then gates). Backward: SeqBackwardFuncs::outputs().
Halide::Pipeline build_seq_forward(const SeqSchedule &schedule, const SeqInputs &in, const PoolingVariant &variant,
                                   const SeqOptions &options, const Halide::Target &target);
Halide::Pipeline build_seq_backward(const SeqSchedule &schedule, const SeqBackwardInputs &in, const PoolingVariant &variant,
                                    const SeqOptions &options, const Halide::Target &target);

}  // namespace qrnn
