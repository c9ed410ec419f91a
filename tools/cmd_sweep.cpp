// `qrnn sweep FILE.yaml -o results.h5`: run (or --dry-run list) the runs a sweep file describes.
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "core/error.h"
#include "sweep/runner.h"
#include "tools/command.h"
#include "tools/options.h"
#include "tools/sweep_slurm.h"
#include "report/table.h"

namespace po = boost::program_options;

namespace qrnn::cli {
namespace {

void list_runs(const sweep::Sweep &s, const std::vector<const sweep::PlannedRun *> &runs, const std::string &output) {
    sweep::ResultTable done;
    if (!output.empty() && std::filesystem::exists(output)) done = sweep::read_results(output);
    std::vector<std::string> header{"#", "run_id"};
    for (auto &k : s.varied_keys) header.push_back(k);
    if (s.replicates > 1) header.push_back("replicate");
    if (s.varied_keys.empty()) header.push_back("config");
    if (!s.interleave.empty()) header.push_back("side by side with #");
    header.push_back("state");
    Table table(header);
    int64_t todo = 0;
    for (auto *run : runs) {
        std::vector<std::string> row{std::to_string(run->index), run->id};
        for (auto &[k, v] : run->varied) row.push_back(v);
        if (s.varied_keys.empty()) row.push_back(run->spec.config.describe());
        if (!s.interleave.empty()) row.push_back(std::to_string(run->group));
        int64_t at = done.index_of(run->id);
        row.push_back(at < 0 ? "to run" : "done (" + done.str(at, "status") + ")");
        todo += at < 0;
        table.add(row);
    }
    std::cout << "sweep " << s.name << (s.description.empty() ? "" : ": " + s.description) << "\n";
    table.print(std::cout);
    std::cout << s.runs.size() << " runs in the sweep, " << runs.size() << " in this shard, " << todo << " to run\n";
}

int sweep_command(const std::vector<std::string> &args) {
    po::options_description desc("qrnn sweep options");
    desc.add_options()("help,h", "show this help")
        ("file", po::value<std::string>(), "sweep YAML file (docs/sweeps.md)")
        ("output,o", po::value<std::string>(), "HDF5 results file: created, or resumed (runs already in it are skipped)")
        ("dry-run", "validate and list the runs (with their state in -o, if given); run nothing")
        ("shard", po::value<std::string>()->default_value("0/1"), "run only slice i of N: runs whose index % N == i")
        ("retry-failed", "re-run runs recorded with a status other than ok")
        ("skip-model-check", "accept model names this build does not know (their runs are recorded as failed)");
    desc.add(slurm_sweep_options());
    po::positional_options_description positional;
    positional.add("file", 1);
    po::variables_map vm;
    if (!parse_options("usage: qrnn sweep FILE.yaml -o results.h5 [options]", desc, args, vm, &positional)) return kExitOk;
    if (!vm.count("file")) fail("give a sweep file: qrnn sweep FILE.yaml -o results.h5");
    sweep::LoadOptions load;
    load.check_models = !vm.count("skip-model-check");
    sweep::Sweep s = sweep::load_sweep(vm["file"].as<std::string>(), load);
    if (wants_slurm(vm)) return submit_sweep_to_slurm(s, vm);
    sweep::RunnerOptions opts;
    opts.shard = sweep::parse_shard(vm["shard"].as<std::string>());
    if (vm.count("output")) opts.output = vm["output"].as<std::string>();
    if (vm.count("dry-run")) {
        list_runs(s, sweep::shard_runs(s, opts.shard), opts.output);
        return kExitOk;
    }
    if (opts.output.empty()) fail("give the results file: -o results.h5");
    opts.retry_failed = vm.count("retry-failed") > 0;
    opts.interactive = isatty(STDERR_FILENO);
    sweep::SweepSummary summary = sweep::run_sweep(s, opts, std::cerr);
    std::cout << "sweep " << s.name << ": ran " << summary.ran << ", " << summary.already_done << " already done; shard status:";
    for (auto &[status, count] : summary.status) std::cout << " " << status << " " << count;
    std::cout << " -> " << opts.output << "\n";
    const bool bad = summary.status.count(sweep::kStatusFailed) || summary.status.count(sweep::kStatusCheckFailed) ||
                     summary.status.count(sweep::kStatusCrashed);
    if (bad) std::cout << "some runs failed: `qrnn report " << opts.output << "` shows their errors\n";
    return bad ? kExitCheckFailed : kExitOk;
}

const bool cmd_sweep_registered = register_command({"sweep", "run a YAML sweep into an HDF5 results file (resumable, shardable)", sweep_command});
}  // namespace
}  // namespace qrnn::cli
