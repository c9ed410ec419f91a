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

std::string utc_now_iso();  // ISO 8601 UTC, e.g. 2026-11-22T01:23:45Z

}  // namespace qrnn
