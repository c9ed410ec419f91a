// The report of `qrnn bench` (tools/cmd_bench.cpp): the settings every section reads, the sgemm references, the
// triad every floor uses, and the rows (a table and JSON). Each section (bench/bench_sections.cpp) times our
// kernels against this machine's references in one process, side by side, and adds its ratios as rows.
#pragma once
#include <Halide.h>

#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "bench/bench_kernels.h"
#include "bench/sgemm_references.h"
#include "report/table.h"

namespace qrnn::cli {

class BenchReport {
public:
    BenchReport(const PoolingVariant &pooling, std::string target_text, const Halide::Target &target, int repeats, bool quick);

    // The triad's bandwidth, a row of its own (the pooling and layer floors use the triad).
    void triad_bandwidth();
    // A row: our figure against a reference, the ratio judged against `bar` (as written: 4 decimals).
    void row(const std::string &what, const std::string &shape, const std::string &ours, const std::string &ref,
             double ratio, double bar, bool higher_is_better = true, const bench::RoundRatios *spread = nullptr);
    // A GEMM (runs[0]) against the best of the references (the rest), each timed in the same rounds; the winner
    // is named. The ratio is the median over rounds of (best reference's time / ours) in that round, with its
    // quartiles; 3x the rounds (small calls: one preempted call moves a median of 11 by several percent).
    // names: of runs[1..] (default: the sgemm references); bar: the ratio to meet.
    void gemm_row(const std::string &what, const std::string &shape, const std::vector<std::function<void()>> &runs,
                  double flops, const std::vector<std::string> &names = {}, double bar = 0.90);
    void print() const { table.print(std::cout); }
    // The context (date, CPU, target, settings) and every row.
    void write_json(const std::string &path, const std::string &clock, double other_threads) const;

    // The sections, in the order they run (run_bench_sections).
    void gemm();
    void gemm_bf16();
    void layer_int8();
    void pooling_scan();
    void layer();
    void chunked();
    void backward();
    void autotuned();
    void decoder();
    void attention();
    void arch();

    const PoolingVariant &pooling;  // the --pooling option's
    const std::string target_text;
    const Halide::Target target;
    const std::string target_name;  // tuning_target_name(target)
    const std::vector<bench::SgemmReference> &refs;
    const int warmup = 2, repeats;
    const bool quick;

private:
    std::string ref_names() const;
    bench::Triad triad;  // 3 arrays of 32 Mi floats (384 MiB, far beyond L3); 8 Mi with quick
    Table table{{"benchmark", "shape", "ours", "reference", "ratio", "q1-q3", "target", "met"}};
    std::vector<std::string> json_rows;
};

// The sections --what names ("gemm", "pooling", ...): check_bench_sections fails on an unknown one;
// run_bench_sections runs the wanted ones in the sections' own order.
void check_bench_sections(const std::vector<std::string> &wanted);
void run_bench_sections(BenchReport &report, const std::vector<std::string> &wanted);

}  // namespace qrnn::cli
