// Wall-clock timing of a callable: warm-up runs, then repeats summarised by median/min/max.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace qrnn {

struct Timing {
    std::vector<double> ms;  // one per repeat
    double median() const;
    double min() const;
    double max() const;
};

Timing time_runs(const std::function<void()> &run, int warmup, int repeats);

std::string utc_now_iso();  // ISO 8601 in UTC: YYYY-MM-DDThh:mm:ssZ

// oneDNN (lstm-onednn) runs on OpenMP, whose threads spin-wait by default: on a shared machine a spinning
// thread holds a core while the one it waits for is descheduled, and an LSTM forward took 2.6 s instead of
// 0.07 s (measured here, 4 engineers on 2 cores). libgomp reads OMP_WAIT_POLICY when it is loaded, before
// main, so an unset policy is set to passive and the process restarts once (call first thing in main).
// An explicit value is kept.
void default_openmp_wait_policy(char **argv);

}  // namespace qrnn
