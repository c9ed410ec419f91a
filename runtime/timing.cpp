#include "runtime/timing.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <unistd.h>

namespace qrnn {

double Timing::median() const {
    std::vector<double> s = ms;
    std::sort(s.begin(), s.end());
    size_t n = s.size();
    return n == 0 ? 0 : (n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]));
}
double Timing::min() const { return ms.empty() ? 0 : *std::min_element(ms.begin(), ms.end()); }
double Timing::max() const { return ms.empty() ? 0 : *std::max_element(ms.begin(), ms.end()); }

Timing time_runs(const std::function<void()> &run, int warmup, int repeats) {
    for (int i = 0; i < warmup; i++) run();
    Timing t;
    for (int i = 0; i < repeats; i++) {
        auto start = std::chrono::steady_clock::now();
        run();
        t.ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    return t;
}

std::string utc_now_iso() {
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

void default_openmp_wait_policy(char **argv) {
    if (std::getenv("OMP_WAIT_POLICY")) return;
    setenv("OMP_WAIT_POLICY", "passive", 1);
    execv("/proc/self/exe", argv);  // returns only on failure: then run with the default policy
}

}  // namespace qrnn
