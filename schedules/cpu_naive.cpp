// CPU schedule "naive": every stage compute_root, scalar and serial: the reference point of the speed-ups.
// Figure (2-core AVX-512 VM, qrnn run fo k=2 B=16 T=128 n=m=320): 1.9 GFLOP/s, 1303 ms (tuned: 42-87).
#include "schedules/schedule.h"

namespace qrnn {
namespace {
void apply_cpu_naive(LayerFuncs &L, const LayerInputs &, const Halide::Target &, const Knobs &) {
    L.input_padded.compute_root();
    L.weights_clamped.compute_root();
    L.conv.compute_root();
    L.gates.compute_root();
}

const bool cpu_naive_registered = [] {
    register_layer_schedule({{"naive", "CPU reference point: compute_root stages, no vectors, no threads", "cpu"}, apply_cpu_naive});
    return true;
}();
}  // namespace
}  // namespace qrnn
