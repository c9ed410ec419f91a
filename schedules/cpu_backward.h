// The two halves of the "tuned" CPU training schedule's backward (schedules/cpu_backward.cpp), also used by
// `qrnn bench --what backward` to time each half alone: the reverse scan (dcell, dpre, dc0) and the GEMMs
// (dweights, dbias, dinput, dx, dhistory; input_padded and weights_t). Knobs: merge_knobs of "tuned".
#pragma once
#include "core/qrnn_backward.h"
#include "schedules/schedule.h"

namespace qrnn {

// dpre (h, b, t, g) element-wise at root: one vector of h for every gate (g unrolled: a select over g folds),
// parallel over t.
void schedule_cpu_dpre(const BackwardFuncs &D, Halide::Func dpre, const Halide::Target &target);
void schedule_cpu_backward_scan(BackwardFuncs &D, const BackwardInputs &in, const Halide::Target &target, const Knobs &knobs);
// The backward's panel rows under these knobs (define_backward_gemms): the GEMM core's register tile rows of dinput
// and dweights.
BackwardPanels cpu_backward_panels(const Halide::Target &target, const Knobs &knobs);
void schedule_cpu_backward_gemms(BackwardFuncs &D, const BackwardInputs &in, const Halide::Target &target, const Knobs &knobs);

}  // namespace qrnn
