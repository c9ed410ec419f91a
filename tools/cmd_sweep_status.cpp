// `qrnn sweep-status results.h5 [--merge]`: progress of a sweep submitted with `qrnn sweep --slurm`, task by
// task (its shard file, squeue/sacct and the task's own record), and the merge of the shards into results.h5.
#include <filesystem>
#include <iostream>
#include <set>

#include "core/error.h"
#include "sweep/merge.h"
#include "sweep/slurm.h"
#include "tools/command.h"
#include "tools/options.h"
#include "sweep/slurm_submit.h"
#include "report/table.h"

namespace fs = std::filesystem;
namespace po = boost::program_options;
namespace sl = qrnn::sweep::slurm;

namespace qrnn::cli {
namespace {

struct TaskRow {
    int64_t task = 0;
    std::string job;  // of the latest submission that included the task ("" if none)
    const sl::TaskState *slurm = nullptr;
    sl::TaskVerdict verdict = sl::TaskVerdict::NotSubmitted;
    sl::ShardProgress progress;
};

// Slurm's state of every task of the given array jobs: squeue (live tasks, and those ended within Slurm's
// MinJobAge), else sacct (when accounting is on). Missing commands or disabled accounting leave the tasks'
// own records to decide.
struct SlurmView {
    std::map<std::string, std::map<int64_t, sl::TaskState>> queue, accounting;
    bool squeue_ok = false;
    const sl::TaskState *find(const std::string &job, int64_t task) const {
        for (auto *m : {&queue, &accounting}) {
            auto j = m->find(job);
            if (j == m->end()) continue;
            auto t = j->second.find(task);
            if (t != j->second.end()) return &t->second;
        }
        return nullptr;
    }
};

SlurmView query_slurm(const std::set<std::string> &jobs) {
    SlurmView v;
    std::string ids;
    for (auto &j : jobs) ids += (ids.empty() ? "" : ",") + j;
    if (ids.empty()) return v;
    ProgramResult q = run_program(sl::squeue_command(ids), false);
    v.squeue_ok = q.started && q.exit_code == 0;
    ProgramResult a = run_program(sl::sacct_command(ids), false);
    for (auto &j : jobs) {
        if (v.squeue_ok) v.queue[j] = sl::parse_squeue(q.output, j);
        if (a.started && a.exit_code == 0) v.accounting[j] = sl::parse_sacct(a.output, j);
    }
    return v;
}

std::string count_or_blank(const std::map<std::string, int64_t> &m, std::initializer_list<const char *> keys) {
    int64_t n = 0;
    for (auto *k : keys)
        if (auto it = m.find(k); it != m.end()) n += it->second;
    return n ? std::to_string(n) : "";
}

// True if the output was written after every shard file (merged since the last run finished).
bool merged_after_shards(const sl::ArrayPaths &paths, int64_t tasks) {
    if (!fs::exists(paths.output)) return false;
    const auto merged = fs::last_write_time(paths.output);
    for (int64_t t = 0; t < tasks; t++)
        if (fs::exists(paths.shard(t, tasks)) && fs::last_write_time(paths.shard(t, tasks)) > merged) return false;
    return true;
}

int merge_shards(const sl::ArrayPaths &paths, const std::vector<TaskRow> &rows, int64_t tasks, bool partial) {
    std::vector<int64_t> unfinished;
    for (auto &r : rows)
        if (r.verdict != sl::TaskVerdict::Done) unfinished.push_back(r.task);
    if (!unfinished.empty() && !partial) {
        std::cout << "not merged: tasks " << sl::array_spec(unfinished) << " are not done; --partial merges what is there\n";
        return kExitCheckFailed;
    }
    std::vector<std::string> inputs;
    for (int64_t t = 0; t < tasks; t++)
        if (fs::exists(paths.shard(t, tasks))) inputs.push_back(paths.shard(t, tasks));
    if (fs::exists(paths.output)) inputs.push_back(paths.output);  // last: keeps runs the shards lack (earlier merges)
    if (inputs.empty()) fail("no shard files to merge (", paths.stem, ".part-*-of-", tasks, ".h5 in ", paths.dir, ")");
    WriterLock lock(paths.output);
    sweep::MergeSummary summary;
    sweep::write_results(paths.output, sweep::merge_results(inputs, summary));
    std::cout << "merged " << inputs.size() << " files: " << summary.rows << " runs -> " << paths.output << "\n";
    return kExitOk;
}

// Each task's latest array job (of the submissions with this task count).
std::vector<TaskRow> task_rows(const std::vector<sl::Submission> &submissions, int64_t tasks) {
    std::vector<TaskRow> rows(static_cast<size_t>(tasks));
    for (auto &s : submissions)
        if (s.kind == "array" && s.of == tasks)
            for (int64_t t : s.tasks)
                if (t < tasks) rows[static_cast<size_t>(t)].job = s.job_id;
    for (int64_t t = 0; t < tasks; t++) rows[static_cast<size_t>(t)].task = t;
    return rows;
}

std::string latest_merge_job(const std::vector<sl::Submission> &submissions) {
    std::string job;
    for (auto &s : submissions)
        if (s.kind == "merge") job = s.job_id;
    return job;
}

// Slurm's state of a task as the table shows it: state, node, elapsed time.
std::string slurm_state_text(const sl::TaskState *slurm) {
    std::string state = slurm ? slurm->state : "";
    if (slurm && !slurm->where.empty() && slurm->where != "(None)") state += " " + slurm->where;
    if (slurm && !slurm->elapsed.empty()) state += " " + slurm->elapsed;
    return state.empty() ? "-" : state;
}

// The tasks' verdicts and run counts, filled into the rows and summed.
struct Tally {
    std::map<sl::TaskVerdict, std::vector<int64_t>> by_verdict;
    int64_t runs = 0, done = 0;
};

Tally judge_tasks(const sweep::Sweep &sw, const sl::ArrayPaths &paths, const SlurmView &slurm, std::vector<TaskRow> &rows) {
    Tally tally;
    const int64_t tasks = static_cast<int64_t>(rows.size());
    for (TaskRow &r : rows) {
        r.slurm = r.job.empty() ? nullptr : slurm.find(r.job, r.task);
        r.progress = sl::shard_progress(sw, {r.task, tasks}, paths.shard(r.task, tasks));
        r.verdict = sl::task_verdict(r.slurm, sl::read_task_record(paths.task_state(r.task)), r.progress);
        tally.by_verdict[r.verdict].push_back(r.task);
        tally.runs += r.progress.runs;
        tally.done += r.progress.done;
    }
    return tally;
}

void print_task_table(const std::vector<TaskRow> &rows, const sl::ArrayPaths &paths) {
    Table table({"task", "job", "slurm", "task state", "runs", "done", "ok", "failed", "crashed", "to run", "shard file"});
    const int64_t tasks = static_cast<int64_t>(rows.size());
    for (const TaskRow &r : rows) {
        const auto &st = r.progress.status;
        table.add({std::to_string(r.task), r.job.empty() ? "-" : r.job + "_" + std::to_string(r.task),
                   slurm_state_text(r.slurm), sl::verdict_name(r.verdict), std::to_string(r.progress.runs),
                   std::to_string(r.progress.done), count_or_blank(st, {"ok"}),
                   count_or_blank(st, {"failed", "check_failed", "unavailable"}), count_or_blank(st, {"crashed"}),
                   r.progress.to_run ? std::to_string(r.progress.to_run) : "",
                   fs::path(paths.shard(r.task, tasks)).filename().string()});
    }
    table.print(std::cout);
}

// What to do next: report, merge or resubmit.
void print_next_step(const Tally &tally, const sl::ArrayPaths &paths, const sl::Submission &last, int64_t tasks) {
    const auto &v = tally.by_verdict;
    const bool all_done = v.size() == 1 && v.count(sl::TaskVerdict::Done);
    const bool any_live = v.count(sl::TaskVerdict::Running) || v.count(sl::TaskVerdict::Pending);
    if (all_done && merged_after_shards(paths, tasks)) std::cout << "all done and merged: qrnn report " << paths.output << "\n";
    else if (all_done) std::cout << "all done: qrnn sweep-status " << paths.output << " --merge\n";
    else if (!any_live)
        std::cout << "to run what is missing, submit again: qrnn sweep " << last.sweep_file << " -o " << paths.output
                  << " --slurm\n";
}

int sweep_status_command(const std::vector<std::string> &args) {
    po::options_description desc("qrnn sweep-status options");
    desc.add_options()("help,h", "show this help")
        ("output", po::value<std::string>(), "the results file given to `qrnn sweep --slurm -o`")
        ("merge", "merge the shard files into the results file if every task is done (else exit 1)")
        ("partial", "with --merge: merge whatever the shards hold, done or not");
    po::positional_options_description positional;
    positional.add("output", 1);
    po::variables_map vm;
    if (!parse_options("usage: qrnn sweep-status results.h5 [--merge [--partial]]", desc, args, vm, &positional))
        return kExitOk;
    if (!vm.count("output")) fail("give the results file: qrnn sweep-status results.h5");
    const sl::ArrayPaths paths = sl::array_paths(vm["output"].as<std::string>());
    const auto submissions = sl::read_submissions(paths.jobs());
    const sl::Submission *last = nullptr;
    for (auto &s : submissions)
        if (s.kind == "array") last = &s;
    if (!last)
        fail("no Slurm submission recorded for ", paths.output, " (", paths.jobs(),
             " is missing); submit with: qrnn sweep FILE.yaml -o ", vm["output"].as<std::string>(), " --slurm");
    sweep::LoadOptions load;
    load.check_models = false;  // run ids do not depend on it; the tasks check models themselves
    const sweep::Sweep sw = sweep::load_sweep(last->sweep_file, load);
    const int64_t tasks = last->of;

    std::vector<TaskRow> rows = task_rows(submissions, tasks);
    std::set<std::string> jobs;
    for (auto &r : rows)
        if (!r.job.empty()) jobs.insert(r.job);
    const std::string merge_job = latest_merge_job(submissions);
    if (!merge_job.empty()) jobs.insert(merge_job);
    const SlurmView slurm = query_slurm(jobs);
    const Tally tally = judge_tasks(sw, paths, slurm, rows);

    std::cout << "sweep " << sw.name << " (" << last->sweep_file << ") as " << tasks << " Slurm tasks -> " << paths.output << "\n";
    print_task_table(rows, paths);
    std::cout << tally.done << " of " << tally.runs << " runs done";
    for (auto &[v, list] : tally.by_verdict) std::cout << "; " << sl::verdict_name(v) << ": " << sl::array_spec(list);
    std::cout << "\n";
    if (!slurm.squeue_ok) std::cout << "note: squeue failed or is missing; task states come from the tasks' own records\n";
    if (!merge_job.empty()) {
        const sl::TaskState *m = slurm.find(merge_job, -1);
        std::cout << "merge job " << merge_job << ": " << (m ? m->state : "ended or unknown") << "\n";
    }
    if (vm.count("merge")) return merge_shards(paths, rows, tasks, vm.count("partial") > 0);
    print_next_step(tally, paths, *last, tasks);
    return kExitOk;
}

const bool cmd_sweep_status_registered = register_command(
    {"sweep-status", "progress of a sweep submitted with `qrnn sweep --slurm`, task by task; --merge the shards",
     sweep_status_command});
}  // namespace
}  // namespace qrnn::cli
