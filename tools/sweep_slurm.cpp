#include "tools/sweep_slurm.h"

#include <filesystem>

#include "core/error.h"
#include "sweep/slurm_submit.h"
#include "tools/command.h"

namespace fs = std::filesystem;
namespace po = boost::program_options;

namespace qrnn::cli {
namespace sl = sweep::slurm;

po::options_description slurm_sweep_options() {
    po::options_description desc("on a Slurm cluster (docs/sweeps.md#on-a-slurm-cluster)");
    desc.add_options()
        ("slurm", "submit the sweep as a Slurm job array (one shard per task) instead of running it here")
        ("slurm-dry-run", "print the job script and the sbatch command; write and submit nothing")
        ("tasks", po::value<int64_t>(), "array tasks = shards (default: the shard files' count, else 4)")
        ("sbatch-arg", po::value<std::vector<std::string>>()->composing(),
         "an sbatch option for the job script, repeatable: --sbatch-arg=--time=2:00:00 --sbatch-arg=--partition=cpu")
        ("scratch", po::value<std::string>(),
         "node-local directory (e.g. /tmp or '$TMPDIR') to write each shard in; copied to the output directory")
        ("merge-when-done", "also submit a job that merges the shards into -o when the array ends (afterany)");
    return desc;
}

bool wants_slurm(const po::variables_map &vm) { return vm.count("slurm") || vm.count("slurm-dry-run"); }

namespace {
// The job script's settings from the command line.
sl::ScriptOptions script_options(const sweep::Sweep &sw, const po::variables_map &vm, const sl::ArrayPaths &paths) {
    sl::ScriptOptions opts;
    opts.qrnn = sl::self_path();
    opts.sweep_file = fs::absolute(sw.path).lexically_normal().string();
    opts.paths = paths;
    opts.tasks = sl::task_count(vm.count("tasks") ? std::optional<int64_t>(vm["tasks"].as<int64_t>()) : std::nullopt, paths);
    opts.job_name = "qrnn-" + sw.name;
    if (vm.count("sbatch-arg")) opts.sbatch_args = vm["sbatch-arg"].as<std::vector<std::string>>();
    for (auto &a : opts.sbatch_args)
        if (a.empty() || a[0] != '-' || a.find('\n') != std::string::npos)
            fail("--sbatch-arg '", a, "': not an sbatch option (e.g. --sbatch-arg=--time=1:00:00)");
    if (vm.count("scratch")) opts.scratch = vm["scratch"].as<std::string>();
    opts.sweep_args = sl::plugin_args(sw);
    if (vm.count("skip-model-check")) opts.sweep_args.push_back("--skip-model-check");
    if (vm.count("retry-failed")) opts.sweep_args.push_back("--retry-failed");
    return opts;
}
}  // namespace

int submit_sweep_to_slurm(const sweep::Sweep &sw, const po::variables_map &vm) {
    if (!vm.count("output")) fail("give the results file: -o results.h5 (the shards are written beside it)");
    if (vm.count("shard") && !vm["shard"].defaulted())
        fail("--shard and --slurm: the array's tasks are the shards; give their number with --tasks N");
    const sl::ArrayPaths paths = sl::array_paths(vm["output"].as<std::string>());
    sl::SubmitOptions how;
    how.dry_run = vm.count("slurm-dry-run") > 0;
    how.retry_failed = vm.count("retry-failed") > 0;
    how.merge_when_done = vm.count("merge-when-done") > 0;
    sl::submit_array(sw, script_options(sw, vm, paths), how);
    return kExitOk;
}

}  // namespace qrnn::cli
