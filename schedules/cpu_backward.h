// The two halves of the "tuned" CPU training schedule's backward (schedules/cpu_backward.cpp), also used by
// `qrnn bench --what backward` to time each half alone: the reverse scan (dcell, dpre, dc0) and the GEMMs
// (dweights, dbias, dinput, dx, dhistory; input_padded and weights_t). Knobs: merge_knobs of "tuned".
#pragma once
#include "core/qrnn_backward.h"
#include "schedules/schedule.h"

namespace qrnn {

void schedule_cpu_backward_scan(BackwardFuncs &D, const BackwardInputs &in, const Halide::Target &target, const Knobs &knobs);
void schedule_cpu_backward_gemms(BackwardFuncs &D, const BackwardInputs &in, const Halide::Target &target, const Knobs &knobs);

}  // namespace qrnn
