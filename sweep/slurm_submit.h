// Submitting a sweep as a Slurm job array and asking Slurm about it: the commands (sbatch, squeue, sacct) run
// here, on the plain-text pieces of sweep/slurm.h. The CLI (tools/sweep_slurm.cpp, tools/cmd_sweep_status.cpp)
// only turns options into these calls.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "runtime/run_program.h"
#include "sweep/slurm.h"
#include "sweep/sweep_spec.h"

namespace qrnn::sweep::slurm {

// The path of this qrnn executable (the job script runs it on the nodes).
std::string self_path();
// `--plugin FILE` for each plugin library the sweep's runs use (loaded here by --plugin, --plugin-dir or
// QRNN_PLUGIN_PATH), so that the tasks load them too.
std::vector<std::string> plugin_args(const Sweep &sw);
// The task count: `asked` (--tasks), or that of the shard files already there (a resubmission), else 4. Throws
// qrnn::Error when the shard files disagree with each other or with `asked`.
int64_t task_count(std::optional<int64_t> asked, const ArrayPaths &paths);

struct SubmitOptions {
    bool dry_run = false;          // print the script and the sbatch command; write and submit nothing
    bool retry_failed = false;     // failed runs count as work left
    bool merge_when_done = false;  // also submit a job that merges the shards when the array ends
};
// Submits the array of the tasks with work left (a resubmission runs only what the shard files lack), after
// refusing an output directory the tasks cannot write or live tasks of an earlier submission; records the
// submission beside the output. Prints what it did. Throws qrnn::Error when sbatch is missing or fails.
void submit_array(const Sweep &sw, ScriptOptions opts, const SubmitOptions &how);

}  // namespace qrnn::sweep::slurm
