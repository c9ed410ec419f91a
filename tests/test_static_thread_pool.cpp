// runtime/static_thread_pool.h: every iteration runs exactly once (odd sizes, loops back to back, nested loops,
// two callers at once), an inner loop is shared by threads with nothing else to do, the first error comes back, and a
// Halide pipeline using it matches plain C++.
#include <gtest/gtest.h>

#include <Halide.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "runtime/static_thread_pool.h"

namespace qrnn {
namespace {

struct Counts {
    std::vector<std::atomic<int>> hits;
    int failing = -1;  // the iteration that returns an error, -1: none
    bool nested = false;
    explicit Counts(int n) : hits(n) {}
};

int count_iteration(Halide::JITUserContext *, int i, uint8_t *closure) {
    auto *counts = reinterpret_cast<Counts *>(closure);
    counts->hits[i].fetch_add(1);
    if (counts->nested) {  // an inner loop from inside a task
        Counts inner(3);
        if (static_do_par_for(nullptr, count_iteration, 0, 3, reinterpret_cast<uint8_t *>(&inner)) != 0) return 1;
        for (auto &h : inner.hits)
            if (h.load() != 1) return 2;
    }
    return i == counts->failing ? 100 + i : 0;
}

void expect_each_once(int min, int size, bool nested = false) {
    Counts counts(min + size);
    counts.nested = nested;
    ASSERT_EQ(static_do_par_for(nullptr, count_iteration, min, size, reinterpret_cast<uint8_t *>(&counts)), 0);
    for (int i = 0; i < min + size; i++) ASSERT_EQ(counts.hits[i].load(), i >= min ? 1 : 0) << "iteration " << i;
}

TEST(StaticThreadPool, EveryIterationOnceOverOddSizesAndOffsets) {
    for (int size : {0, 1, 2, 3, 5, 7, 64, 1001})
        for (int min : {0, 3}) expect_each_once(min, size);
}

TEST(StaticThreadPool, LoopsBackToBack) {
    for (int round = 0; round < 3000; round++) expect_each_once(0, 1 + round % 13);
}

TEST(StaticThreadPool, NestedLoopsRunEveryIterationOnce) {
    for (int size : {2, 3, 37}) expect_each_once(0, size, true);
}

// Iteration 0 of a 2-iteration loop runs an inner loop of slow iterations; the thread whose range was iteration 1
// must join it (dW's 3 (g) x 2 (j) tasks each ran an inner loop over h groups, serially, and took 1.3x the time).
struct SharedInner {
    std::mutex mutex;
    std::set<std::thread::id> threads;
};

int slow_iteration(Halide::JITUserContext *, int, uint8_t *closure) {
    auto *shared = reinterpret_cast<SharedInner *>(closure);
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    std::lock_guard<std::mutex> lock(shared->mutex);
    shared->threads.insert(std::this_thread::get_id());
    return 0;
}

int outer_iteration(Halide::JITUserContext *, int i, uint8_t *closure) {
    return i == 0 ? static_do_par_for(nullptr, slow_iteration, 0, 40, closure) : 0;
}

TEST(StaticThreadPool, IdleThreadsJoinAnInnerLoop) {
    if (static_thread_pool_threads() < 2) GTEST_SKIP() << "one thread";
    SharedInner shared;
    ASSERT_EQ(static_do_par_for(nullptr, outer_iteration, 0, 2, reinterpret_cast<uint8_t *>(&shared)), 0);
    EXPECT_GE(shared.threads.size(), 2u);
}

TEST(StaticThreadPool, ReturnsTheErrorAndStillRunsTheOtherIterations) {
    Counts counts(50);
    counts.failing = 17;
    EXPECT_EQ(static_do_par_for(nullptr, count_iteration, 0, 50, reinterpret_cast<uint8_t *>(&counts)), 117);
    for (auto &h : counts.hits) EXPECT_EQ(h.load(), 1);
}

TEST(StaticThreadPool, TwoCallersAtOnce) {
    std::atomic<int> failures{0};
    auto caller = [&] {
        for (int round = 0; round < 500; round++) {
            Counts counts(29);
            if (static_do_par_for(nullptr, count_iteration, 0, 29, reinterpret_cast<uint8_t *>(&counts)) != 0) failures++;
            for (auto &h : counts.hits)
                if (h.load() != 1) failures++;
        }
    };
    std::thread a(caller), b(caller);
    a.join(), b.join();
    EXPECT_EQ(failures.load(), 0);
}

TEST(StaticThreadPool, PipelineMatchesPlainLoops) {
    const int W = 37, H = 53;
    Halide::Var x("x"), y("y");
    Halide::Func f("f"), g("g");
    f(x, y) = Halide::cast<float>(x * 3 + y);
    g(x, y) = f(x, y) * 2.0f + f(x, (y + 1) % H);
    f.compute_root().parallel(y);
    g.parallel(y).vectorize(x, 8, Halide::TailStrategy::GuardWithIf);
    Halide::Pipeline p(g);
    use_static_thread_pool(p);
    for (int round = 0; round < 20; round++) {
        Halide::Buffer<float> out = p.realize({W, H});
        for (int j = 0; j < H; j++)
            for (int i = 0; i < W; i++)
                ASSERT_EQ(out(i, j), (i * 3 + j) * 2.0f + (i * 3 + (j + 1) % H)) << i << "," << j;
    }
}

}  // namespace
}  // namespace qrnn
