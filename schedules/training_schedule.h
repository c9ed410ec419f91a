// Schedules of a training step, chosen by name like the forward schedules (schedules/schedule.h): the
// forward that saves its tape (cell and activated gates are both outputs) and the backward pipeline of
// core/qrnn_backward.h. A forward schedule name without a training schedule of the same name is an error
// naming the ones there are.
#pragma once
#include "core/qrnn_backward.h"
#include "schedules/schedule.h"

namespace qrnn {

// The tape of gates is realised over (h, t) rounded up to these multiples (its GEMM tiles may not overrun
// an output buffer); the backward reads the [0, m) x [0, T) part.
struct TapePadding {
    int h = 1, t = 1;
};

struct TrainingSchedule : ScheduleRecord {
    std::function<void(LayerFuncs &, const LayerInputs &, const Halide::Target &, const Knobs &)> apply_forward;
    std::function<void(BackwardFuncs &, const BackwardInputs &, const Halide::Target &, const Knobs &)> apply_backward;
    std::function<TapePadding(const Halide::Target &, const Knobs &)> tape_padding;  // unset: no padding
    // The backward's panel rows (define_qrnn_backward); unset: operands unpacked.
    std::function<BackwardPanels(const Halide::Target &, const Knobs &)> backward_panels;
};

void register_training_schedule(TrainingSchedule schedule);
// Throws qrnn::Error "schedule 'X' has no training (backward) schedule (have: ...)".
const TrainingSchedule &find_training_schedule(const std::string &name);
std::vector<std::string> training_schedule_names();
// Forward with tape: LayerFuncs::outputs(true) (cell (c, h), then gates). Backward: BackwardFuncs::outputs().
Halide::Pipeline build_training_forward(const TrainingSchedule &schedule, const LayerInputs &in,
                                        const PoolingVariant &variant, const Halide::Target &target, const Knobs &knobs);
Halide::Pipeline build_training_backward(const TrainingSchedule &schedule, const BackwardInputs &in,
                                         const PoolingVariant &variant, const Halide::Target &target, const Knobs &knobs);

}  // namespace qrnn
