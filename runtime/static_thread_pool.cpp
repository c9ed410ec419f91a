#include "runtime/static_thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "runtime/parse_number.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace qrnn {
namespace {
using Task = int (*)(Halide::JITUserContext *, int, uint8_t *);

thread_local bool t_in_pool_task = false;  // a worker, or a caller inside its own loop

// QRNN_POOL_PAUSE_US, read once: how long a waiting thread pauses the core before it yields it (default 5; 0
// yields at once).
int pause_microseconds() {
    static const int us = [] {
        const char *env = std::getenv("QRNN_POOL_PAUSE_US");
        if (!env) return 5;
        int64_t value = -1;
        try {
            value = parse_int(env);
        } catch (const Error &) {
        }
        if (value < 0 || value > 100000)
            fail("environment variable QRNN_POOL_PAUSE_US must be an integer from 0 to 100000 (microseconds), got '", env, "'");
        return static_cast<int>(value);
    }();
    return us;
}

// One wait (for a loop to start, for the others' iterations to end): the core paused (~20 ns a step) for the first
// pause_microseconds(), then yielded (a syscall: ~1.2 us on the 2-core VM, whose kernel maps pages with PTI). Yielding
// at once cost every parallel loop a few us to start and to join: an element-wise pass over 185 x 203 floats took
// 6.4 us on 2 threads against 3.2 on one, 3.1-4.0 with pauses. 5 us, not 20: as fast when quiet, and a thread
// waiting for one that lost its core to another job holds its own core less (docs/schedules.md, "Waits that pause").
class Backoff {
public:
    void step() {
        if (pausing_) {
            for (int i = 0; i < 32; i++) pause();
            if (++steps_ % 8 == 0) pausing_ = std::chrono::steady_clock::now() < until_;
        } else {
            std::this_thread::yield();
        }
    }

private:
    static void pause() {
#if defined(__x86_64__) || defined(__i386__)
        _mm_pause();
#endif
    }
    const std::chrono::steady_clock::time_point until_ =
        std::chrono::steady_clock::now() + std::chrono::microseconds(pause_microseconds());
    bool pausing_ = pause_microseconds() > 0;
    int steps_ = 0;
};

// Keeps the first error a loop's iterations return.
void keep_first_error(std::atomic<int> &first, int error) {
    int none = 0;
    if (error) first.compare_exchange_strong(none, error);
}

// Every iteration, as the pool does; the first error.
int run_serially(Halide::JITUserContext *context, Task task, int min, int size, uint8_t *closure) {
    int first = 0;
    for (int i = 0; i < size; i++)
        if (int error = task(context, min + i, closure); error && !first) first = error;
    return first;
}

int thread_count() {
    if (const char *env = std::getenv("HL_NUM_THREADS")) {
        const int n = std::atoi(env);
        if (n >= 1) return n;
    }
    return std::max(1u, std::thread::hardware_concurrency());
}

// One loop at a time. generation_ is odd while a loop runs; a worker runs it only after counting itself in
// active_ and seeing the odd generation, and the caller rewrites the loop's fields only once every worker is out
// (active_ 0 after the generation went even).
class Pool {
public:
    explicit Pool(int threads) : ranges_(threads) {
        for (int k = 1; k < threads; k++) std::thread([this, k] { work(k); }).detach();
    }
    int threads() const { return static_cast<int>(ranges_.size()); }

    // false when another loop is running (the caller then runs its loop serially).
    bool run(Halide::JITUserContext *context, Task task, int min, int size, uint8_t *closure, int *error) {
        if (busy_.exchange(true, std::memory_order_acquire)) return false;
        context_ = context, task_ = task, min_ = min, closure_ = closure;
        const int n = static_cast<int>(ranges_.size());
        for (int k = 0; k < n; k++) {
            ranges_[k].next.store(static_cast<int>(int64_t(size) * k / n), std::memory_order_relaxed);
            ranges_[k].end = static_cast<int>(int64_t(size) * (k + 1) / n);
        }
        done_.store(0, std::memory_order_relaxed);
        error_.store(0, std::memory_order_relaxed);
        generation_.fetch_add(1, std::memory_order_seq_cst);  // odd: running
        if (sleepers_.load(std::memory_order_seq_cst) > 0) {
            std::lock_guard<std::mutex> lock(mutex_);
            wake_.notify_all();
        }
        t_in_pool_task = true;
        run_ranges(0);
        help_while([&] { return done_.load(std::memory_order_acquire) < size; });
        t_in_pool_task = false;
        generation_.fetch_add(1, std::memory_order_seq_cst);  // even: over
        for (Backoff wait; active_.load(std::memory_order_seq_cst) > 0;) wait.step();
        *error = error_.load(std::memory_order_relaxed);
        busy_.store(false, std::memory_order_release);
        return true;
    }

    // A loop started inside a task: published so that threads done with their own ranges join it, its iterations
    // handed out one at a time; returns once every iteration ran, with the first error.
    int run_inner(Halide::JITUserContext *context, Task task, int min, int size, uint8_t *closure) {
        InnerLoop loop{context, task, min, size, closure};
        {
            std::lock_guard<std::mutex> lock(inner_mutex_);
            inner_.push_back(&loop);
            inner_count_.fetch_add(1, std::memory_order_release);
        }
        loop.run();
        {
            std::lock_guard<std::mutex> lock(inner_mutex_);
            inner_.erase(std::find(inner_.begin(), inner_.end(), &loop));
            inner_count_.fetch_sub(1, std::memory_order_relaxed);
        }
        help_while([&] { return loop.helpers.load(std::memory_order_acquire) > 0; });  // no one joins it now
        return loop.error.load(std::memory_order_relaxed);
    }

private:
    struct InnerLoop {
        Halide::JITUserContext *context;
        Task task;
        int min, size;
        uint8_t *closure;
        std::atomic<int> next{0}, error{0}, helpers{0};
        void run() {
            for (int i; (i = next.fetch_add(1, std::memory_order_relaxed)) < size;)
                keep_first_error(error, task(context, min + i, closure));
        }
    };

    // Runs iterations of the newest published inner loop that has some left; false if there was none.
    bool help_inner_loop() {
        if (inner_count_.load(std::memory_order_acquire) == 0) return false;
        InnerLoop *loop = nullptr;
        {
            std::lock_guard<std::mutex> lock(inner_mutex_);
            for (auto it = inner_.rbegin(); it != inner_.rend() && !loop; ++it)
                if ((*it)->next.load(std::memory_order_relaxed) < (*it)->size) loop = *it;
            if (!loop) return false;
            loop->helpers.fetch_add(1, std::memory_order_relaxed);  // under the lock: its caller waits for us
        }
        loop->run();
        loop->helpers.fetch_sub(1, std::memory_order_release);
        return true;
    }

    // While `waiting()`, runs iterations of published inner loops, else yields.
    template <typename Waiting>
    void help_while(Waiting waiting) {
        Backoff wait;
        while (waiting())
            if (!help_inner_loop()) wait.step();
    }

    struct alignas(64) Range {
        std::atomic<int> next{0};
        int end = 0;
    };

    // Range `self` first, then the others' leftovers. The iterations run are counted into done_ once at the end: an
    // increment per iteration moved done_'s cache line between the cores every time (120 empty iterations on 2
    // threads took 3x as long).
    void run_ranges(int self) {
        const int n = static_cast<int>(ranges_.size());
        int ran = 0;
        for (int j = 0; j < n; j++) {
            Range &r = ranges_[(self + j) % n];
            for (int i; (i = r.next.fetch_add(1, std::memory_order_relaxed)) < r.end; ran++)
                keep_first_error(error_, task_(context_, min_ + i, closure_));
        }
        if (ran) done_.fetch_add(ran, std::memory_order_release);
    }

    // Generation g is a loop running that this worker has not run yet.
    static bool unseen_loop(uint64_t g, uint64_t seen) { return (g & 1) && g != seen; }
    bool new_loop(uint64_t seen) const { return unseen_loop(generation_.load(std::memory_order_seq_cst), seen); }

    void work(int self) {
        t_in_pool_task = true;
        uint64_t seen = 0;
        for (;;) {
            // Spin (yielding) 0.3 ms, then sleep: a pipeline's next loop, or often its next call, comes sooner, and
            // waking a sleeping thread cost ~50 us on the 2-core VM (the forward at T=37 S=53 B=5 m=203 right after an
            // sgemm call: 0.22 ms with a 20-us spin, 0.18 ms with 0.3 ms, 0.17 ms back to back).
            const auto spin_end = std::chrono::steady_clock::now() + std::chrono::microseconds(300);
            for (Backoff wait; !new_loop(seen) && std::chrono::steady_clock::now() < spin_end;) wait.step();
            if (!new_loop(seen)) {
                std::unique_lock<std::mutex> lock(mutex_);
                sleepers_.fetch_add(1, std::memory_order_seq_cst);
                wake_.wait(lock, [&] { return new_loop(seen); });
                sleepers_.fetch_sub(1, std::memory_order_seq_cst);
            }
            active_.fetch_add(1, std::memory_order_seq_cst);
            const uint64_t g = generation_.load(std::memory_order_seq_cst);
            if (unseen_loop(g, seen)) {
                seen = g;
                run_ranges(self);
                // The loop's other tasks may start inner loops.
                help_while([&] { return generation_.load(std::memory_order_seq_cst) == g; });
            }
            active_.fetch_sub(1, std::memory_order_seq_cst);
        }
    }

    std::vector<Range> ranges_;
    std::atomic<bool> busy_{false};
    std::atomic<uint64_t> generation_{0};
    std::atomic<int> active_{0}, done_{0}, error_{0}, sleepers_{0};
    std::mutex mutex_;
    std::condition_variable wake_;
    std::mutex inner_mutex_;
    std::vector<InnerLoop *> inner_;  // published inner loops, newest last
    std::atomic<int> inner_count_{0};
    Halide::JITUserContext *context_ = nullptr;
    Task task_ = nullptr;
    int min_ = 0;
    uint8_t *closure_ = nullptr;
};

Pool *pool() {
    static Pool *p = [] {
        const int threads = thread_count();
        return threads > 1 ? new Pool(threads) : nullptr;  // never freed: workers outlive exit
    }();
    return p;
}

// QRNN_THREAD_POOL, read once: static (the default) or halide.
bool static_thread_pool_chosen() {
    static const bool chosen = [] {
        const char *env = std::getenv("QRNN_THREAD_POOL");
        const std::string choice = env ? env : "static";
        if (choice != "static" && choice != "halide")
            fail("environment variable QRNN_THREAD_POOL must be 'static' or 'halide', got '", choice, "'");
        return choice == "static";
    }();
    return chosen;
}

}  // namespace

int static_thread_pool_threads() { return pool() ? pool()->threads() : 1; }

int static_do_par_for(Halide::JITUserContext *context, Task task, int min, int size, uint8_t *closure) {
    int error = 0;
    if (size > 1 && pool()) {
        if (t_in_pool_task) return pool()->run_inner(context, task, min, size, closure);
        if (pool()->run(context, task, min, size, closure, &error)) return error;
    }
    return run_serially(context, task, min, size, closure);
}

void use_static_thread_pool(Halide::Pipeline &pipeline) {
    if (static_thread_pool_handler()) pipeline.jit_handlers().custom_do_par_for = static_do_par_for;
}

halide_do_par_for_t static_thread_pool_handler() {
    if (!static_thread_pool_chosen()) return nullptr;
    pause_microseconds();  // a bad QRNN_POOL_PAUSE_US is an error here, not in a worker
    // The same function: AOT code passes its user context (void *) where the JIT passes a JITUserContext *.
    return reinterpret_cast<halide_do_par_for_t>(&static_do_par_for);
}

}  // namespace qrnn
