// oneDNN's primitives for the passes of a pipeline that are not GEMMs, as benchmark references beside the best
// sgemm (bench/sgemm_references.h): softmax along the rows of a row-major [rows][cols] f32 matrix and its
// backward, and the element-wise product of two f32 arrays. Each primitive is made once for its shape and held to
// the target's ISA like dnnl_sgemm (DNNL_MAX_CPU_ISA, runtime/cpu_info.h). Its calls run on oneDNN's OpenMP
// threads, or with `calling_thread` on the calling thread alone: `qrnn` runs OpenMP passive (runtime/timing.h),
// so a call on the threads first wakes them (~20-40 us on this VM), more than a small pass takes.
#pragma once
#include <cstdint>
#include <memory>

namespace qrnn::bench {

class OnednnSoftmax {
public:
    OnednnSoftmax(int64_t rows, int64_t cols, bool calling_thread);
    void forward(const float *x, float *y);                       // y = softmax(x) along each row
    void backward(const float *y, const float *dy, float *dx);    // dx = y * (dy - sum(y * dy)) along each row

private:
    struct State;
    std::shared_ptr<State> s_;
};

class OnednnProduct {
public:
    OnednnProduct(int64_t elements, bool calling_thread);
    void run(const float *a, const float *b, float *c);  // c = a * b element by element

private:
    struct State;
    std::shared_ptr<State> s_;
};

}  // namespace qrnn::bench
