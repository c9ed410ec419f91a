// Schedules of the variable-length / bidirectional layer (core/qrnn_seq.h), by name like the training
// schedules: "naive" (compute_root, scalar: the reference point) and "tuned" (CPU: the plain layer's gates
// GEMM with the activation epilogue and serial scans; backward: scans, then dW, dbias and dx by the plain
// layer's GEMM-core schedules, schedules/cpu_backward.h),
// "cuda-tiled" (GPU: every stage a tiled kernel; compiled and PTX-assembled, tests/test_gpu_ptxas_seq.py).
#pragma once
#include "core/qrnn_seq.h"
#include "schedules/training_schedule.h"

namespace qrnn {

// Knobs: what the schedule chose for the layer width its pipelines are built for (width_defaults(m, target); the
// pipelines stay correct for every m, only tuned for that one; m <= 0: no width known, the target's defaults).
// Its knobs are its width_defaults (those of the training schedule it shares tiles with); it adds no specs.
struct SeqSchedule : ScheduleRecord {
    std::function<void(SeqFuncs &, const SeqInputs &, const Halide::Target &, const Knobs &)> apply_forward;
    std::function<void(SeqBackwardFuncs &, const SeqBackwardInputs &, const Halide::Target &, const Knobs &)> apply_backward;
    std::function<TapePadding(const Halide::Target &, const Knobs &)> tape_padding;  // unset: no padding
    std::function<BackwardPanels(const Halide::Target &, const Knobs &)> backward_panels;  // unset: unpacked
};

void register_seq_schedule(SeqSchedule schedule);
// Throws qrnn::Error "unknown variable-length/bidirectional schedule 'X' (known: ...)".
const SeqSchedule &find_seq_schedule(const std::string &name);
std::vector<std::string> seq_schedule_names();
// schedule.width_defaults(m, target), or none.
Knobs seq_schedule_knobs(const SeqSchedule &schedule, int64_t m, const Halide::Target &target);

// Forward: outputs SeqFuncs::outputs() (the scans, then gates). Backward: SeqBackwardFuncs::outputs().
Halide::Pipeline build_seq_forward(const SeqSchedule &schedule, const SeqInputs &in, const PoolingVariant &variant,
                                   const SeqOptions &options, const Halide::Target &target, const Knobs &knobs);
Halide::Pipeline build_seq_backward(const SeqSchedule &schedule, const SeqBackwardInputs &in, const PoolingVariant &variant,
                                    const SeqOptions &options, const Halide::Target &target, const Knobs &knobs);

}  // namespace qrnn
