// A sweep as a Slurm job array: task i runs shard i/N of the sweep into its own results file next to the
// output (resumable like any sweep), and the shards are merged into the output when all are done.
// Everything here is plain text in, plain text out (script, squeue/sacct parsing, the submission record),
// so it is unit-tested without Slurm; sweep/slurm_submit.h runs the commands.
// Another engine (MPI, Kubernetes indexed jobs) reuses the shard files and ArrayPaths: docs/sweeps.md.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sweep/runner.h"

namespace qrnn::sweep::slurm {

// Where a sweep's array keeps its files, all beside the output `results/x.h5`:
//   results/x.part-I-of-N.h5     shard I's results (what task I writes)
//   results/x.slurm/sweep.sbatch the job script (readable, editable, submittable by hand)
//   results/x.slurm/jobs         one line per submission (job ids, tasks, sweep file)
//   results/x.slurm/logs/        each task's stdout+stderr;  results/x.slurm/tasks/I.state: start/exit lines
struct ArrayPaths {
    std::string output;  // absolute
    std::string dir, stem;  // output's directory and file name without extension
    std::string slurm_dir() const { return dir + "/" + stem + ".slurm"; }
    std::string script() const { return slurm_dir() + "/sweep.sbatch"; }
    std::string jobs() const { return slurm_dir() + "/jobs"; }
    std::string logs() const { return slurm_dir() + "/logs"; }
    std::string task_state(int64_t task) const { return slurm_dir() + "/tasks/" + std::to_string(task) + ".state"; }
    std::string shard(int64_t task, int64_t tasks) const;
};
ArrayPaths array_paths(const std::string &output);
// The task counts N of shard files already beside the output (normally none or one).
std::vector<int64_t> shard_counts_on_disk(const ArrayPaths &paths);

struct ScriptOptions {
    std::string qrnn, sweep_file;  // absolute paths (the nodes must see them: a shared file system)
    ArrayPaths paths;
    int64_t tasks = 1;
    std::string job_name;
    std::vector<std::string> sbatch_args;  // each becomes an `#SBATCH ARG` line, e.g. --time=2:00:00
    std::vector<std::string> sweep_args;   // passed to every `qrnn sweep`, e.g. --skip-model-check
    std::string scratch;                   // node-local directory for the shard while it is written ("": none)
    int64_t max_starts = 3;                // a task restarts `qrnn sweep` killed by a signal up to this often
};
std::string sbatch_script(const ScriptOptions &opts);

std::string array_spec(const std::vector<int64_t> &tasks);        // {0,1,2,5} -> "0-2,5"
std::vector<int64_t> parse_array_spec(const std::string &spec);   // "0-2,5" -> {0,1,2,5}; throws qrnn::Error
std::string shell_quote(const std::string &word);                 // 'word' when it needs quoting
std::string parse_sbatch_job_id(const std::string &sbatch_output);  // of `sbatch --parsable`: "123" or "123;cluster"

// Slurm's view of one array task: state as squeue/sacct print it (PENDING, RUNNING, COMPLETED, FAILED,
// CANCELLED, TIMEOUT, ...), the reason or node, elapsed time, exit code ("" if unknown).
struct TaskState {
    std::string state, where, elapsed, exit_code;
};
bool is_live(const std::string &state);  // pending, running, completing, suspended, ...: not ended
// Arguments of squeue/sacct listing the array tasks of `job_ids` (comma-separated) in the format parsed below;
// squeue with `-t all`, so tasks that ended recently (within Slurm's MinJobAge) are listed too.
std::vector<std::string> squeue_command(const std::string &job_ids);
std::vector<std::string> sacct_command(const std::string &job_ids);
// `squeue -h -r -j JOB -o '%F|%K|%T|%M|%R'` lines ("17|2|RUNNING|0:05|node1"); tasks of other jobs ignored;
// a job that is not an array ("18|N/A|...") is task -1.
std::map<int64_t, TaskState> parse_squeue(const std::string &text, const std::string &job_id);
// `sacct -n -P -X -j JOB -o JobID,State,ExitCode,Elapsed` lines ("17_2|CANCELLED by 0|0:15|00:00:07");
// ranges of pending tasks ("17_[3-5]") expand; a job that is not an array is task -1.
std::map<int64_t, TaskState> parse_sacct(const std::string &text, const std::string &job_id);

// One submission in the jobs record.
struct Submission {
    std::string kind;  // "array" or "merge"
    std::string job_id;
    std::vector<int64_t> tasks;  // array: the tasks submitted
    int64_t of = 0;              // array: N
    std::string sweep_file;      // array: absolute path
    std::string after;           // merge: the array job it waits for
    std::string utc;
};
std::string format_submission(const Submission &s);  // one line: key=value fields separated by tabs
std::vector<Submission> read_submissions(const std::string &jobs_path);  // [] if the file is absent
void append_submission(const std::string &jobs_path, const Submission &s);

// A task's own record (tasks/I.state): the last `started ...` / `exit RC ...` line it wrote.
struct TaskRecord {
    bool started = false, exited = false;
    int exit_code = 0;
    std::string job;  // "17_2"
};
TaskRecord read_task_record(const std::string &state_path);

// The runs of one shard as its file records them.
struct ShardProgress {
    int64_t runs = 0;      // in the shard
    int64_t done = 0;      // with a final status (ok, failed, check_failed, unavailable, crashed)
    int64_t to_run = 0;    // missing, or interrupted (`running`) and retried by the next task
    std::map<std::string, int64_t> status;  // every recorded status, `running` included
};
// `retry_failed`: as `qrnn sweep --retry-failed` (runs not ok are to run again).
ShardProgress shard_progress(const Sweep &sweep, const Shard &shard, const std::string &shard_file,
                             bool retry_failed = false);
// True if a task for this shard has something to do (run a run, or record a twice-killed run as crashed).
inline bool has_work(const ShardProgress &p) { return p.done < p.runs; }

// Starts a missing shard file with the rows of `output` (e.g. an earlier merge) that belong to the shard, so
// that its task runs only what the output lacks. Returns the rows copied (0: no output, nothing written).
int64_t seed_shard(const Sweep &sweep, const Shard &shard, const std::string &output, const std::string &shard_file);

// The verdict on a task, from Slurm's state, the task's record and its shard file.
enum class TaskVerdict { Pending, Running, Done, Failed, Interrupted, NotSubmitted };
const char *verdict_name(TaskVerdict v);
TaskVerdict task_verdict(const TaskState *slurm, const TaskRecord &record, const ShardProgress &progress);

}  // namespace qrnn::sweep::slurm
