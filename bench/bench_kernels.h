// Kernels measured by `qrnn bench`, each next to its reference: the layer's conv GEMM (the "tuned"
// schedule's GEMM, alone) and OpenBLAS sgemm; the pooling scan alone (serial or chunked) and a STREAM-style
// triad; all JIT-compiled once and run on buffers owned here.
#pragma once
#include <Halide.h>

#include <functional>
#include <memory>
#include <string>

#include "runtime/timing.h"
#include "schedules/schedule.h"

namespace qrnn::bench {

// Conv GEMM of one layer shape, run by Halide (the tuned schedule's GEMM, compiled for `target` with its
// target-aware defaults) or by a reference sgemm (bench/sgemm_references.h) on the same M = T*B, N = G*m,
// K = n*k problem (im2col built once, outside the timing).
class ConvGemm {
public:
    // bf16: the conv on bfloat16 operands (core/precision.h), its reference dnnl_bf16_gemm on the same roundings.
    ConvGemm(const PoolingVariant &pooling, const LayerShape &shape, const Halide::Target &target,
             Precision precision = Precision::f32);
    void run_halide();
    void run_reference(size_t i);  // sgemm_references(target)[i]; bf16: dnnl_bf16_gemm (i = 0)
    double flops() const;
    double max_rel_diff(size_t i);  // |halide - reference i| / max|reference i|: both compute the same GEMM

private:
    struct State;
    std::shared_ptr<State> s_;
};

// Pooling alone, as the layers' scans run it: the scan over a buffer of activated gates (h, b, t, g), values
// in (0, 1) (the CPU schedules compute the activations in the GEMM epilogue), serial (time loop per
// (h-vector, b) strip) or chunked (core/chunked_scan.h).
class PoolingScan {
public:
    PoolingScan(const PoolingVariant &pooling, const LayerShape &shape, const Halide::Target &target, bool chunked,
                int chunk = 64);
    void run();
    double bytes() const;  // minimal traffic: read G activated gates, write c and h
    double max_rel_diff(PoolingScan &other);

private:
    struct State;
    std::shared_ptr<State> s_;
};

// The training backward's two GEMMs (schedules/cpu_backward.h: "tuned" for `target`, from a seeded dpre buffer), or a reference sgemm on the same problems (operands laid out once, outside the timing):
//   dW: C[k*n][G*m] = window(x)^T [k*n][T*B] * dpre[T*B][G*m]          (Halide also builds input_padded)
//   dX: C[T*B][n]   = window(dpre)[T*B][k*G*m] * weights[k*G*m][n]     (Halide also applies dropout, off here)
class BackwardGemms {
public:
    BackwardGemms(const PoolingVariant &pooling, const LayerShape &shape, const Halide::Target &target);
    void run_dweights();
    void run_dinput();
    void run_reference_dweights(size_t i);  // sgemm_references(target)[i]
    void run_reference_dinput(size_t i);
    double flops() const;  // of each GEMM: 2 T B G m n k
    // |halide - reference i| / max|reference i| of dW and of dX.
    std::pair<double, double> max_rel_diff(size_t i);

private:
    struct State;
    std::shared_ptr<State> s_;
};

// The backward's reverse-time scan alone (dcell of core/qrnn_backward.h, scheduled as "tuned" does) over a tape
// of activated gates in (0, 1); bytes() counts what it must move: the gate planes, cell and dh it reads (found
// by Halide's bounds inference, e.g. f and o for fo), dcell written.
class BackwardScan {
public:
    BackwardScan(const PoolingVariant &pooling, const LayerShape &shape, const Halide::Target &target);
    void run();
    double bytes() const;

private:
    struct State;
    std::shared_ptr<State> s_;
};

// a = b + s * c over `elements` floats per array, vectorised and parallel; bytes() counts 3 arrays (STREAM).
class Triad {
public:
    Triad(int64_t elements, const Halide::Target &target);
    void run();
    double bytes() const;

private:
    struct State;
    std::shared_ptr<State> s_;
};

// Times a and b alternately (warm-up first), so both see the same machine state; medians of each.
std::pair<Timing, Timing> time_side_by_side(const std::function<void()> &a, const std::function<void()> &b, int warmup,
                                            int repeats);
// The same for any number of callables, run round-robin; with warm_calls each timed call comes right after an
// untimed call of the same callable (for calls of a fraction of a millisecond, which the callable before slows).
std::vector<Timing> time_interleaved(const std::vector<std::function<void()>> &fs, int warmup, int repeats,
                                     bool warm_calls = false);

// The per-round ratios reference[i] / ours[i] of two timings taken in the same rounds (> 1: ours faster): their
// median and quartiles. A round's two calls share the machine's state, so the ratio moves less than each time.
struct RoundRatios {
    double median = 0, q1 = 0, q3 = 0;
};
RoundRatios round_ratios(const Timing &ours, const Timing &reference);

}  // namespace qrnn::bench
