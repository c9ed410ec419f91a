#include "sweep/slurm_submit.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "core/error.h"
#include "plugins/loader.h"
#include "runtime/timing.h"

namespace qrnn::sweep::slurm {

namespace fs = std::filesystem;

std::string self_path() {
    std::error_code ec;
    fs::path p = fs::read_symlink("/proc/self/exe", ec);
    if (ec) fail("cannot find the qrnn executable (/proc/self/exe): ", ec.message());
    return p.string();
}

std::vector<std::string> plugin_args(const Sweep &sw) {
    std::set<std::string> libraries;
    for (auto &run : sw.runs) {
        const ModelConfig &c = run.spec.config;
        for (auto &[kind, name] : {std::pair{"model", c.model}, {"pooling", c.pooling}, {"schedule", c.schedule}})
            if (std::string from = plugin_source(kind, name); from != "built-in")
                libraries.insert(fs::absolute(from).lexically_normal().string());
    }
    std::vector<std::string> args;
    for (auto &lib : libraries) args.insert(args.end(), {"--plugin", lib});
    return args;
}

int64_t task_count(std::optional<int64_t> asked, const ArrayPaths &paths) {
    const std::vector<int64_t> on_disk = shard_counts_on_disk(paths);
    if (on_disk.size() > 1)
        fail(paths.dir, " holds shard files of ", on_disk.size(), " different task counts (", paths.stem,
             ".part-*-of-N.h5); merge them (qrnn merge) and remove the extra ones");
    if (!asked) return on_disk.empty() ? 4 : on_disk.front();
    const int64_t tasks = *asked;
    if (tasks < 1) fail("--tasks ", tasks, ": needs at least 1");
    if (!on_disk.empty() && on_disk.front() != tasks)
        fail("--tasks ", tasks, ": ", paths.stem, ".part-*-of-", on_disk.front(), ".h5 exist in ", paths.dir,
             " from a submission of ", on_disk.front(), " tasks; resubmit with --tasks ", on_disk.front(),
             ", or merge them first (qrnn sweep-status ", paths.output, " --merge) and remove them");
    return tasks;
}

namespace {

void check_writable(const std::string &dir) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    const std::string probe = dir + "/.qrnn-write-test-" + std::to_string(::getpid());
    std::ofstream out(probe);
    if (ec || !out) fail("output directory ", dir, " is not writable (", ec ? ec.message() : std::strerror(errno),
                         "): give -o a directory the tasks can write, on a file system the nodes share");
    out.close();
    fs::remove(probe);
}

// Live tasks of earlier submissions (pending or running): a second writer for their shards would fail.
void refuse_if_live(const ArrayPaths &paths) {
    std::string ids;
    for (auto &s : read_submissions(paths.jobs()))
        if (s.kind == "array") ids += (ids.empty() ? "" : ",") + s.job_id;
    if (ids.empty()) return;
    ProgramResult q = run_program(squeue_command(ids), false);
    if (!q.started) fail("squeue not found: is this a Slurm login node?");
    for (auto &s : read_submissions(paths.jobs())) {
        std::vector<int64_t> tasks;
        for (auto &[t, st] : parse_squeue(q.output, s.job_id))
            if (is_live(st.state)) tasks.push_back(t);
        if (tasks.empty()) continue;
        fail("job ", s.job_id, " still has tasks ", array_spec(tasks), " pending or running for ", paths.output,
             "; wait for them (qrnn sweep-status ", paths.output, "), or `scancel ", s.job_id, "`, then resubmit");
    }
}

std::string submit(const std::vector<std::string> &argv) {
    ProgramResult r = run_program(argv);
    if (!r.started) fail("sbatch not found: is this a Slurm login node?");
    if (r.exit_code != 0) {
        std::string why = r.output;
        while (!why.empty() && why.back() == '\n') why.pop_back();
        std::replace(why.begin(), why.end(), '\n', ' ');
        fail("sbatch failed (exit ", r.exit_code, "): ", why);
    }
    return parse_sbatch_job_id(r.output);
}

// The tasks with work left: a resubmission runs only what the shard files (or an earlier merge) lack.
struct WorkLeft {
    std::vector<int64_t> tasks;
    int64_t runs = 0;         // runs to do over those tasks
    int64_t largest_shard = 0;  // runs in the largest shard
};

WorkLeft work_left(const Sweep &sw, const ScriptOptions &opts, bool dry_run, bool retry_failed) {
    WorkLeft left;
    for (int64_t t = 0; t < opts.tasks; t++) {
        const Shard shard{t, opts.tasks};
        if (!dry_run) seed_shard(sw, shard, opts.paths.output, opts.paths.shard(t, opts.tasks));
        const ShardProgress p = shard_progress(sw, shard, opts.paths.shard(t, opts.tasks), retry_failed);
        left.largest_shard = std::max(left.largest_shard, p.runs);
        left.runs += p.runs - p.done;
        if (has_work(p)) left.tasks.push_back(t);
    }
    return left;
}

// Writes the job script; one that differs from the file there (edited by hand?) is kept as .previous.
void write_job_script(const ArrayPaths &paths, const std::string &script) {
    fs::create_directories(paths.logs());
    fs::create_directories(fs::path(paths.task_state(0)).parent_path());
    if (fs::exists(paths.script())) {
        std::ifstream in(paths.script());
        std::stringstream old;
        old << in.rdbuf();
        if (old.str() != script) {
            fs::copy_file(paths.script(), paths.script() + ".previous", fs::copy_options::overwrite_existing);
            std::cerr << "note: " << paths.script() << " differed (edited by hand?); the old one is "
                      << paths.script() << ".previous\n";
        }
    }
    {
        std::ofstream out(paths.script());
        out << script;
        if (!out) fail(paths.script(), ": cannot write the job script");
    }
    fs::permissions(paths.script(), fs::perms::owner_exec, fs::perm_options::add);
}

// A job that merges the shards into -o when the array `job` ends (afterany).
void submit_merge_job(const ScriptOptions &opts, const std::string &job) {
    const ArrayPaths &paths = opts.paths;
    std::vector<std::string> argv{"sbatch", "--parsable", "--dependency=afterany:" + job,
                                  "--job-name=" + opts.job_name + "-merge", "--ntasks=1",
                                  "--output=" + paths.logs() + "/merge-%j.out"};
    for (auto &a : opts.sbatch_args) {  // "--time 1:00" (as in the script) is two words here
        const size_t space = a.find(' ');
        argv.push_back(a.substr(0, space));
        if (space != std::string::npos) argv.push_back(a.substr(a.find_first_not_of(' ', space)));
    }
    argv.push_back("--wrap=" + shell_quote(opts.qrnn) + " sweep-status " + shell_quote(paths.output) + " --merge");
    const std::string merge_job = submit(argv);
    append_submission(paths.jobs(), {"merge", merge_job, {}, 0, "", job, utc_now_iso()});
    std::cout << "submitted job " << merge_job << ": merges the shards into " << paths.output << " when job " << job
              << " ends\n";
}

}  // namespace

void submit_array(const Sweep &sw, ScriptOptions opts, const SubmitOptions &how) {
    const ArrayPaths &paths = opts.paths;
    if (!how.dry_run) {
        check_writable(paths.dir);
        refuse_if_live(paths);
    }
    const WorkLeft left = work_left(sw, opts, how.dry_run, how.retry_failed);
    opts.max_starts = kMaxAttempts * left.largest_shard + 1;
    const std::string script = sbatch_script(opts);
    if (how.dry_run) std::cout << script;
    if (left.tasks.empty()) {
        (how.dry_run ? std::cerr : std::cout) << "every run of the sweep (" << sw.runs.size() << ") is done in " << paths.stem
                                              << ".part-*-of-" << opts.tasks << ".h5: nothing to submit; merge them: "
                                              << "qrnn sweep-status " << paths.output << " --merge\n";
        return;
    }
    const std::string array = "--array=" + array_spec(left.tasks);
    if (how.dry_run) {
        std::cerr << "dry run: would write " << paths.script() << " and run: sbatch --parsable " << array << " "
                  << paths.script() << "   (" << left.tasks.size() << " tasks, " << left.runs << " runs to do)\n";
        return;
    }
    write_job_script(paths, script);
    const std::string job = submit({"sbatch", "--parsable", array, paths.script()});
    append_submission(paths.jobs(), {"array", job, left.tasks, opts.tasks, opts.sweep_file, "", utc_now_iso()});
    std::cout << "submitted job " << job << ": tasks " << array_spec(left.tasks) << " of " << opts.tasks << " ("
              << left.runs << " runs to do) -> " << paths.dir << "/" << paths.stem << ".part-I-of-" << opts.tasks << ".h5\n";
    if (how.merge_when_done) submit_merge_job(opts, job);
    std::cout << "follow it: qrnn sweep-status " << paths.output << "   (or squeue -j " << job << "; logs in "
              << paths.logs() << ")\n";
}

}  // namespace qrnn::sweep::slurm
