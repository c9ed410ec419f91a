// `qrnn bench`'s rows (bench/bench_report.h).
#include "bench/bench_report.h"

#include <cmath>
#include <fstream>
#include <iostream>

#include "core/error.h"
#include "runtime/timing.h"
#include "schedules/cpu_target.h"
#include "schedules/gemm_tuning.h"
#include "schedules/tuning_db.h"
#include "tools/options.h"

namespace qrnn::cli {
namespace {
std::string json_quote(const std::string &s) {
    std::string out = "\"";
    for (char ch : s) out += (ch == '"' || ch == '\\') ? std::string("\\") + ch : std::string(1, ch);
    return out + "\"";
}

// Index of the fastest of timings [1, end) (the references), by median.
size_t fastest_reference(const std::vector<Timing> &t) {
    size_t best = 1;
    for (size_t i = 2; i < t.size(); i++)
        if (t[i].median() < t[best].median()) best = i;
    return best;
}
}  // namespace

BenchReport::BenchReport(const PoolingVariant &pooling_, std::string target_text_, const Halide::Target &target_, int repeats_,
                         bool quick_)
    : pooling(pooling_), target_text(std::move(target_text_)), target(target_),
      target_name(tuning_target_name(target_)), refs(bench::sgemm_references(target_)), repeats(repeats_),
      quick(quick_), triad(quick_ ? (8 << 20) : (32 << 20), target_) {
    std::cout << "qrnn bench: CPU " << cpu_info().describe() << "\n  target " << target_name << "; pooling=" << pooling.name
              << ", medians of " << repeats << " alternating runs; sgemm references: " << ref_names() << "\n  GEMM core: "
              << gemm_core_knobs(target).describe() << "\n";
}

std::string BenchReport::ref_names() const {
    std::string names;
    for (auto &r : refs) names += (names.empty() ? "" : ", ") + r.name;
    return names;
}

void BenchReport::triad_bandwidth() {
    Timing t = bench::time_side_by_side([&] { triad.run(); }, [] {}, warmup, repeats).first;
    table.add({"triad bandwidth", "3 x " + std::to_string(static_cast<int64_t>(triad.bytes() / 3 / 4)) + " floats",
               fixed(triad.bytes() / (t.median() * 1e6), 1) + " GB/s", "-", "-", "-", "-", "-"});
}

void BenchReport::row(const std::string &what, const std::string &shape, const std::string &ours, const std::string &ref,
                      double ratio, double bar, bool higher_is_better, const bench::RoundRatios *spread) {
    ratio = std::round(ratio * 1e4) / 1e4;  // judged as written (JSON: 4 decimals), so "met" agrees with it
    bool met = higher_is_better ? ratio >= bar : ratio <= bar;
    json_rows.push_back("{\"benchmark\":" + json_quote(what) + ",\"shape\":" + json_quote(shape) + ",\"ours\":" +
                        json_quote(ours) + ",\"reference\":" + json_quote(ref) + ",\"ratio\":" + fixed(ratio, 4) +
                        (spread ? ",\"ratio_q1\":" + fixed(spread->q1, 4) + ",\"ratio_q3\":" + fixed(spread->q3, 4) : "") +
                        ",\"target\":" + fixed(bar, 2) + ",\"met\":" + (met ? "true" : "false") + "}");
    // 3 decimals, or 4 where 3 would round onto the other side of the bar (0.8996 reads 0.8996, not 0.900).
    std::string shown = fixed(ratio, 3);
    if ((higher_is_better ? std::stod(shown) >= bar : std::stod(shown) <= bar) != met) shown = fixed(ratio, 4);
    table.add({what, shape, ours, ref, shown, spread ? fixed(spread->q1, 2) + "-" + fixed(spread->q3, 2) : "-",
               (higher_is_better ? ">= " : "<= ") + fixed(bar, 2), met ? "yes" : "NO"});
    std::cerr << "  " << what << " " << shape << ": " << shown << "\n";
}

void BenchReport::gemm_row(const std::string &what, const std::string &shape, const std::vector<std::function<void()>> &runs,
                           double flops, const std::vector<std::string> &names, double bar) {
    auto t = bench::time_interleaved(runs, warmup, 3 * repeats);
    size_t best = fastest_reference(t);
    double g_ours = flops / (t[0].median() * 1e6), g_best = flops / (t[best].median() * 1e6);
    bench::RoundRatios r = bench::round_ratios(t[0], t[best]);
    const std::string name = names.empty() ? refs[best - 1].name : names.at(best - 1);
    row(what, shape, fixed(g_ours, 1) + " GFLOP/s", fixed(g_best, 1) + " GFLOP/s " + name, r.median, bar, true, &r);
}

void BenchReport::write_json(const std::string &path, const std::string &clock, double other_threads) const {
    std::ofstream f(path);
    f << "{\"context\":{\"date\":" << json_quote(utc_now_iso()) << ",\"cpu\":" << json_quote(cpu_info().describe())
      << ",\"cpu_isa\":" << json_quote(cpu_info().isa) << ",\"target\":" << json_quote(target_name)
      << ",\"target_isa\":" << json_quote(target_isa(target)) << ",\"gemm_core\":" << json_quote(gemm_core_knobs(target).describe())
      << ",\"pooling\":" << json_quote(pooling.name)
      << ",\"repeats\":" << repeats << ",\"clock\":" << json_quote(clock)
      << ",\"other_threads_cpu_share\":" << fixed(other_threads, 4)
      << ",\"statistic\":\"median of alternating runs\",\"sgemm_references\":"
      << json_quote(ref_names()) << "},\n \"benchmarks\":[";
    for (size_t i = 0; i < json_rows.size(); i++) f << (i ? ",\n  " : "\n  ") << json_rows[i];
    f << "]}\n";
    if (!f) fail("--json: cannot write ", path);
}

}  // namespace qrnn::cli
