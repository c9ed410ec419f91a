#include "bench/onednn_row_ops.h"

#include <dlfcn.h>

#include <dnnl.hpp>

namespace qrnn::bench {
namespace {

dnnl::engine &cpu_engine() {
    static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    return engine;
}

dnnl::stream &cpu_stream() {
    static dnnl::stream stream(cpu_engine());
    return stream;
}

dnnl::memory::desc matrix(int64_t rows, int64_t cols) {
    return dnnl::memory::desc({rows, cols}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ab);
}

// A memory with no data of its own: each call points it at the caller's array.
dnnl::memory unbound(const dnnl::memory::desc &d) { return dnnl::memory(d, cpu_engine(), DNNL_MEMORY_NONE); }

void bind(dnnl::memory &m, const float *data) { m.set_data_handle(const_cast<float *>(data)); }

// OpenMP's thread count for the calling thread is 1 while one of these lives, when `calling_thread` (libgomp comes
// with oneDNN; looked up, not linked). Primitives are made under it too: some fix their thread count then.
class CallingThreadOnly {
public:
    explicit CallingThreadOnly(bool calling_thread) {
        using GetThreads = int (*)();
        static const auto get = reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
        if (calling_thread && get && set()) threads_ = get(), set()(1);
    }
    ~CallingThreadOnly() {
        if (threads_ > 0) set()(threads_);
    }

private:
    using SetThreads = void (*)(int);
    static SetThreads set() {
        static const auto f = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
        return f;
    }
    int threads_ = 0;
};

void execute(const dnnl::primitive &p, const std::unordered_map<int, dnnl::memory> &args, bool calling_thread) {
    CallingThreadOnly scope(calling_thread);
    p.execute(cpu_stream(), args);
    cpu_stream().wait();
}

}  // namespace

struct OnednnSoftmax::State {
    bool calling_thread;
    dnnl::softmax_forward forward;
    dnnl::softmax_backward backward;
    dnnl::memory x, y, dy, dx;
};

OnednnSoftmax::OnednnSoftmax(int64_t rows, int64_t cols, bool calling_thread) : s_(std::make_shared<State>()) {
    s_->calling_thread = calling_thread;
    CallingThreadOnly scope(calling_thread);
    const dnnl::memory::desc d = matrix(rows, cols);
    dnnl::softmax_forward::primitive_desc fwd(
        dnnl::softmax_forward::desc(dnnl::prop_kind::forward_training, d, /*axis=*/1), cpu_engine());
    dnnl::softmax_backward::primitive_desc bwd(dnnl::softmax_backward::desc(d, d, /*axis=*/1), cpu_engine(), fwd);
    s_->forward = dnnl::softmax_forward(fwd);
    s_->backward = dnnl::softmax_backward(bwd);
    s_->x = unbound(d), s_->y = unbound(d), s_->dy = unbound(d), s_->dx = unbound(d);
}

void OnednnSoftmax::forward(const float *x, float *y) {
    State &s = *s_;
    bind(s.x, x), bind(s.y, y);
    execute(s.forward, {{DNNL_ARG_SRC, s.x}, {DNNL_ARG_DST, s.y}}, s.calling_thread);
}

void OnednnSoftmax::backward(const float *y, const float *dy, float *dx) {
    State &s = *s_;
    bind(s.y, y), bind(s.dy, dy), bind(s.dx, dx);
    execute(s.backward, {{DNNL_ARG_DST, s.y}, {DNNL_ARG_DIFF_DST, s.dy}, {DNNL_ARG_DIFF_SRC, s.dx}}, s.calling_thread);
}

struct OnednnProduct::State {
    bool calling_thread;
    dnnl::binary product;
    dnnl::memory a, b, c;
};

OnednnProduct::OnednnProduct(int64_t elements, bool calling_thread) : s_(std::make_shared<State>()) {
    s_->calling_thread = calling_thread;
    CallingThreadOnly scope(calling_thread);
    const dnnl::memory::desc d = matrix(1, elements);
    s_->product = dnnl::binary(
        dnnl::binary::primitive_desc(dnnl::binary::desc(dnnl::algorithm::binary_mul, d, d, d), cpu_engine()));
    s_->a = unbound(d), s_->b = unbound(d), s_->c = unbound(d);
}

void OnednnProduct::run(const float *a, const float *b, float *c) {
    State &s = *s_;
    bind(s.a, a), bind(s.b, b), bind(s.c, c);
    execute(s.product, {{DNNL_ARG_SRC_0, s.a}, {DNNL_ARG_SRC_1, s.b}, {DNNL_ARG_DST, s.c}}, s.calling_thread);
}

}  // namespace qrnn::bench
