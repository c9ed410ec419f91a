// Runs a sweep into its HDF5 results file: resumable (runs already in the file are skipped), shardable
// (--shard i/N takes runs whose index % N == i; with `interleave`, whole groups by the index of their first
// run), and every run is written as soon as it finishes (a side-by-side group as soon as it finishes).
#pragma once
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "sweep/results_file.h"
#include "sweep/sweep_spec.h"

namespace qrnn::sweep {

struct Shard {
    int64_t index = 0, count = 1;
};
Shard parse_shard(const std::string &text);  // "i/N" with 0 <= i < N; throws qrnn::Error
std::vector<const PlannedRun *> shard_runs(const Sweep &sweep, const Shard &shard);

// Run statuses recorded in the results file.
constexpr const char *kStatusOk = "ok", *kStatusCheckFailed = "check_failed", *kStatusFailed = "failed",
                     *kStatusUnavailable = "unavailable",
                     *kStatusRunning = "running",  // being measured, or the process ended during it
                     *kStatusCrashed = "crashed";  // the process ended during it kMaxAttempts times
constexpr int kMaxAttempts = 2;

// What the next sweep does with a run recorded with `status` after `attempts` starts ("" and 0: not in the
// file): skip it (done), run it, or record it as crashed (it was `running` kMaxAttempts times) and skip it.
enum class NextStep { Skip, Run, MarkCrashed };
NextStep next_step(const std::string &status, int64_t attempts, bool retry_failed);

struct RunnerOptions {
    std::string output;         // results file (created, or resumed)
    Shard shard;
    bool retry_failed = false;  // re-run runs recorded with a status other than ok (their rows are replaced)
    bool interactive = false;   // redraw one progress line (a terminal) instead of one line per run
};

struct SweepSummary {
    int64_t in_shard = 0, already_done = 0, ran = 0;
    std::map<std::string, int64_t> status;  // over the shard's runs in the file afterwards
};

// Measures one run (never throws for a failing run: the row says what went wrong). A training run without
// train.checkpoint checkpoints into checkpoint_dir/<run id>.h5 (when checkpoint_dir is not empty) and resumes
// from it, so that a sweep killed in the middle of a training run goes on from its last checkpoint.
std::map<std::string, Value> measure_run(const Sweep &sweep, const PlannedRun &run, const std::string &checkpoint_dir = "");
// Measures runs of one interleave group side by side (each warm-up and timed repeat runs each in turn);
// if one of them cannot run, each is measured alone so that each gets its own status.
std::vector<std::map<std::string, Value>> measure_side_by_side(const Sweep &sweep, const std::vector<const PlannedRun *> &runs,
                                                               const std::string &checkpoint_dir = "");
// Where run_sweep keeps the checkpoints of the training runs of the results file `output`.
std::string training_checkpoint_dir(const std::string &output);

// Takes the writer lock, then runs what is missing; progress and ETA go to `log`.
SweepSummary run_sweep(const Sweep &sweep, const RunnerOptions &opts, std::ostream &log);

// File attributes describing the sweep, the machine and the build.
void describe_sweep(ResultTable &table, const Sweep &sweep);

}  // namespace qrnn::sweep
