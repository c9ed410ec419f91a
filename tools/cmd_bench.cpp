// `qrnn bench`: how close the schedules come to this machine's limits, each figure a ratio of medians
// measured side by side (alternating runs) in one process. Not a test: timing never decides pass/fail.
// References are the best this machine offers for the target (bench/sgemm_references.h), never an ISA it lacks;
// `--target x86-64-linux-avx-avx2-fma-f16c` measures the AVX2 path on any newer CPU, references held to AVX2.
// The sections: bench/bench_sections.cpp; the rows: bench/bench_report.h.
#include <iostream>

#include "core/error.h"
#include "schedules/cpu_target.h"
#include "bench/bench_clock.h"
#include "bench/bench_report.h"
#include "tools/command.h"
#include "tools/options.h"

namespace po = boost::program_options;

namespace qrnn::cli {
namespace {

po::options_description bench_options() {
    po::options_description desc("qrnn bench options");
    desc.add_options()("help,h", "show this help")
        ("what", po::value<std::string>()->default_value("gemm,pooling,layer,chunked"),
         "sections: gemm (conv vs OpenBLAS sgemm), gemm-bf16 (bf16 conv vs oneDNN's bf16 GEMM; the bf16 layer vs f32), "
         "int8 (the int8 layer's forward vs f32), "
         "pooling (vs triad), layer (vs its floor; fused vs unfused), "
         "chunked (chunked-scan vs serial at B=1), autotuned (tuned-db vs tuned at the tuning DB's newest shape), "
         "backward (training: dW and dX GEMMs vs the best sgemm, reverse scan vs triad), "
         "decoder (the LM's softmax decoder: its 3 GEMMs + fused softmax vs the best sgemm on the same GEMMs), "
         "attention (the encoder-decoder's attention forward and backward vs their steps in the best libraries run in "
         "order: sgemm for the GEMMs, oneDNN for the softmax and products; and vs their GEMMs alone), "
         "arch (dense stack, bidirectional and variable-length layers vs the plain layer doing the same work, "
         "forward and training step)")
        ("pooling", po::value<std::string>()->default_value("fo"), "pooling variant")
        ("target", po::value<std::string>()->default_value("host"),
         "Halide CPU target of our kernels, e.g. x86-64-linux-avx-avx2-fma-f16c; references are held to its ISA")
        ("clock", po::value<std::string>()->default_value("wall"),
         "what each call is timed by: wall (wall time, all cores) or thread-cpu (everything on one thread, timed by "
         "its CPU time: steady ratios on a loaded machine)")
        ("repeats", po::value<int>()->default_value(11), "timed runs of each side (medians reported; the backward and attention sections time 3x as many rounds)")
        ("quick", "fewer and smaller shapes")
        ("json", po::value<std::string>(), "also write the results to this JSON file (context + one row per ratio)");
    return desc;
}

int bench_command(const std::vector<std::string> &args) {
    po::options_description desc = bench_options();
    po::variables_map vm;
    if (!parse_options("usage: qrnn bench [options]", desc, args, vm)) return kExitOk;
    const int repeats = vm["repeats"].as<int>();
    if (repeats < 1) fail("--repeats must be >= 1");
    const bench::Clock clock = bench::parse_clock(vm["clock"].as<std::string>());
    const std::vector<std::string> sections = split_list("what", vm["what"].as<std::string>());
    check_bench_sections(sections);  // before anything is loaded or timed
    const std::string target_text = vm["target"].as<std::string>() == "host" ? "" : vm["target"].as<std::string>();
    const Halide::Target target = parse_target(target_text);
    if (target.has_gpu_feature() || !cpu_runs(target))
        fail("--target ", target.to_string(), ": not a CPU target this machine can run (CPU: ", cpu_info().isa, ")");
    bench::use_clock(clock);  // before the references load OpenBLAS and before any Halide pipeline runs
    BenchReport report(pooling_option(vm), target_text, target, repeats, vm.count("quick") > 0);
    std::cout << "  clock " << bench::clock_name(clock) << ": " << bench::clock_description(clock) << "\n";
    report.triad_bandwidth();
    run_bench_sections(report, sections);
    report.print();
    const double other_threads = bench::other_threads_cpu_share();
    if (clock == bench::Clock::thread_cpu)
        std::cout << "bench: other threads' CPU time during the timed calls: " << fixed(100 * other_threads, 1)
                  << "% of theirs (should be ~0: everything on one thread)\n";
    if (vm.count("json")) {
        const std::string path = vm["json"].as<std::string>();
        report.write_json(path, bench::clock_name(clock), other_threads);
        std::cout << "bench: wrote " << path << "\n";
    }
    return kExitOk;
}

const bool cmd_bench_registered = register_command({"bench", "benchmarks as ratios to this machine's limits (OpenBLAS, triad)", bench_command});
}  // namespace
}  // namespace qrnn::cli
