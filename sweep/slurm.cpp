#include "sweep/slurm.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "core/error.h"

namespace fs = std::filesystem;

namespace qrnn::sweep::slurm {
namespace {

std::vector<std::string> split(const std::string &text, char sep) {
    std::vector<std::string> parts;
    std::string part;
    std::istringstream in(text);
    while (std::getline(in, part, sep)) parts.push_back(part);
    return parts;
}

std::string trim(std::string s) {
    const char *space = " \t\r\n";
    s.erase(0, s.find_first_not_of(space));
    s.erase(s.find_last_not_of(space) + 1);
    return s;
}

int64_t parse_task(const std::string &text, const std::string &context) {
    size_t used = 0;
    int64_t v = -1;
    try {
        v = std::stoll(text, &used);
    } catch (const std::exception &) {
    }
    if (text.empty() || used != text.size() || v < 0) fail(context, ": '", text, "' is not a task number");
    return v;
}

}  // namespace

bool is_live(const std::string &state) {
    for (const char *s : {"PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESIZING", "SUSPENDED"})
        if (state == s) return true;
    return state == "RUNNING" || state == "COMPLETING" || state == "STAGE_OUT" || state == "SIGNALING";
}

std::vector<std::string> squeue_command(const std::string &job_ids) {
    return {"squeue", "-h", "-r", "-t", "all", "--jobs=" + job_ids, "-o", "%F|%K|%T|%M|%R"};
}

std::vector<std::string> sacct_command(const std::string &job_ids) {
    return {"sacct", "-n", "-P", "-X", "--jobs=" + job_ids, "-o", "JobID,State,ExitCode,Elapsed"};
}

std::string ArrayPaths::shard(int64_t task, int64_t tasks) const {
    return dir + "/" + stem + ".part-" + std::to_string(task) + "-of-" + std::to_string(tasks) + ".h5";
}

ArrayPaths array_paths(const std::string &output) {
    if (output.empty()) fail("give the results file: -o results.h5");
    ArrayPaths p;
    const fs::path abs = fs::absolute(output).lexically_normal();
    p.output = abs.string();
    p.dir = abs.parent_path().string();
    p.stem = abs.stem().string();
    return p;
}

std::vector<int64_t> shard_counts_on_disk(const ArrayPaths &paths) {
    std::set<int64_t> counts;
    if (!fs::is_directory(paths.dir)) return {};
    const std::regex name(std::regex_replace(paths.stem, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                          R"(\.part-\d+-of-(\d+)\.h5)");
    for (auto &entry : fs::directory_iterator(paths.dir)) {
        std::smatch m;
        const std::string file = entry.path().filename().string();
        if (std::regex_match(file, m, name)) counts.insert(std::stoll(m[1]));
    }
    return {counts.begin(), counts.end()};
}

std::string shell_quote(const std::string &word) {
    if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                                "@%+=:,./_-") == std::string::npos)
        return word;
    std::string q = "'";
    for (char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

std::string sbatch_script(const ScriptOptions &o) {
    const ArrayPaths &p = o.paths;
    std::string sweep_args;
    for (auto &a : o.sweep_args) sweep_args += " " + shell_quote(a);
    std::string scratch;  // in double quotes: $TMPDIR and the like expand on the node
    for (char c : o.scratch) scratch += std::string(c == '"' || c == '\\' || c == '`' ? "\\" : "") + c;
    std::ostringstream s;
    s << "#!/bin/bash\n"
      << "# Sweep " << o.sweep_file << " as a Slurm job array: task I runs shard I/" << o.tasks << " of the sweep\n"
      << "# into " << p.dir << "/" << p.stem << ".part-I-of-" << o.tasks
      << ".h5 (resumable: a task started again runs only what its shard lacks).\n"
      << "# Written by `qrnn sweep --slurm`; edit freely and submit by hand: sbatch [--array=1,3] THIS_FILE\n"
      << "# (or run one task here: SLURM_ARRAY_TASK_ID=1 bash THIS_FILE).\n"
      << "# Progress: qrnn sweep-status " << p.output << "   (merges the shards when all are done: --merge)\n"
      << "#SBATCH --job-name=" << o.job_name << "\n"
      << "#SBATCH --array=0-" << o.tasks - 1 << "\n"
      << "#SBATCH --output=" << p.logs() << "/task-%a-job-%A.out\n"
      << "#SBATCH --ntasks=1\n";
    for (auto &a : o.sbatch_args) s << "#SBATCH " << a << "\n";
    s << "set -u\n"
      << "QRNN=" << shell_quote(o.qrnn) << "\n"
      << "SWEEP=" << shell_quote(o.sweep_file) << "\n"
      << "OUTPUT_DIR=" << shell_quote(p.dir) << "   # shared: shard files, the merged output\n"
      << "NAME=" << shell_quote(p.stem) << "\n"
      << "TASKS=" << o.tasks << "\n"
      << "SCRATCH=\"" << scratch << "\""
      << "   # node-local directory to write the shard in, copied to OUTPUT_DIR (\"\": write it there)\n"
      << "MAX_STARTS=" << o.max_starts << "   # restarts of a `qrnn sweep` killed by a signal (a run killed twice: crashed)\n"
      << "\n"
      << "task=${SLURM_ARRAY_TASK_ID:?run this with sbatch (or set SLURM_ARRAY_TASK_ID)}\n"
      << "shard=\"$OUTPUT_DIR/$NAME.part-$task-of-$TASKS.h5\"\n"
      << "state=\"$OUTPUT_DIR/$NAME.slurm/tasks/$task.state\"   # the task's record: started ..., exit RC\n"
      << "probe=\"$OUTPUT_DIR/.$NAME.write-test-$task-$$\"\n"
      << "if ! { mkdir -p \"$OUTPUT_DIR\" && : >\"$probe\"; } 2>/dev/null; then\n"
      << "    echo \"qrnn sweep task $task: error: output directory $OUTPUT_DIR is not writable from $(hostname -s):"
         " give -o a shared directory the job can write\" >&2\n"
      << "    exit 2\n"
      << "fi\n"
      << "rm -f \"$probe\"\n"
      << "mkdir -p \"$(dirname \"$state\")\"\n"
      << "echo \"started ${SLURM_ARRAY_JOB_ID:-local}_$task $(hostname -s) $(date -u +%FT%TZ)\" >>\"$state\"\n"
      << "work=\"$shard\"\n"
      << "if [ -n \"$SCRATCH\" ]; then  # write locally; copy to OUTPUT_DIR every 30 s and at the end\n"
      << "    local_dir=\"$SCRATCH/qrnn-${SLURM_JOB_ID:-$$}\"\n"
      << "    mkdir -p \"$local_dir\" || { echo \"qrnn sweep task $task: error: cannot create $local_dir\" >&2; exit 2; }\n"
      << "    work=\"$local_dir/$(basename \"$shard\")\"\n"
      << "    if [ -f \"$shard\" ]; then cp \"$shard\" \"$work\"; else rm -f \"$work\"; fi\n"
      << "    copy_back() { [ -f \"$work\" ] && cp \"$work\" \"$shard.copy\" && mv \"$shard.copy\" \"$shard\"; }\n"
      << "    ( trap 'kill $sleeper 2>/dev/null; exit 0' TERM\n"
      << "      while :; do sleep 30 & sleeper=$!; wait $sleeper; copy_back; done ) &\n"
      << "    copier=$!\n"
      << "    trap 'kill $copier 2>/dev/null; copy_back; rm -rf \"$local_dir\"' EXIT\n"
      << "    trap 'exit 143' TERM\n"
      << "fi\n"
      << "rc=0\n"
      << "for start in $(seq 1 \"$MAX_STARTS\"); do\n"
      << "    \"$QRNN\" sweep \"$SWEEP\" --shard \"$task/$TASKS\" -o \"$work\"" << sweep_args << " && rc=0 || rc=$?\n"
      << "    [ \"$rc\" -lt 128 ] && break  # 0: all ok, 1: some runs failed (recorded), 2: bad input\n"
      << "    echo \"qrnn sweep task $task: qrnn was killed by signal $((rc - 128)); starting it again\" >&2\n"
      << "done\n"
      << "echo \"exit $rc $(date -u +%FT%TZ)\" >>\"$state\"\n"
      << "exit \"$rc\"\n";
    return s.str();
}

std::string array_spec(const std::vector<int64_t> &tasks) {
    std::vector<int64_t> t = tasks;
    std::sort(t.begin(), t.end());
    t.erase(std::unique(t.begin(), t.end()), t.end());
    std::string spec;
    for (size_t i = 0; i < t.size();) {
        size_t j = i;
        while (j + 1 < t.size() && t[j + 1] == t[j] + 1) j++;
        spec += (spec.empty() ? "" : ",") + std::to_string(t[i]) + (j > i ? "-" + std::to_string(t[j]) : "");
        i = j + 1;
    }
    return spec;
}

std::vector<int64_t> parse_array_spec(const std::string &spec) {
    std::vector<int64_t> tasks;
    std::string body = spec.substr(0, spec.find('%'));  // "0-7%2": at most 2 at once
    for (auto &part : split(body, ',')) {
        auto dash = part.find('-');
        if (dash == std::string::npos) {
            tasks.push_back(parse_task(part, "array '" + spec + "'"));
            continue;
        }
        int64_t lo = parse_task(part.substr(0, dash), "array '" + spec + "'");
        int64_t hi = parse_task(part.substr(dash + 1), "array '" + spec + "'");
        if (hi < lo) fail("array '", spec, "': range ", part, " is empty");
        for (int64_t t = lo; t <= hi; t++) tasks.push_back(t);
    }
    if (tasks.empty()) fail("array '", spec, "' has no tasks");
    return tasks;
}

std::string parse_sbatch_job_id(const std::string &out) {
    std::string first = trim(out.substr(0, out.find('\n')));
    first = first.substr(0, first.find(';'));
    if (first.rfind("Submitted batch job ", 0) == 0) first = first.substr(20);
    if (first.empty() || first.find_first_not_of("0123456789") != std::string::npos)
        fail("sbatch printed '", trim(out), "', not a job id");
    return first;
}

std::map<int64_t, TaskState> parse_squeue(const std::string &text, const std::string &job_id) {
    std::map<int64_t, TaskState> tasks;
    for (auto &line : split(text, '\n')) {
        auto f = split(trim(line), '|');
        if (f.size() < 5 || f[0] != job_id) continue;
        TaskState st{f[2], f[4], f[3], ""};
        if (f[1] == "N/A") {  // not an array
            tasks[-1] = st;
            continue;
        }
        std::string ids = f[1];
        if (ids.front() == '[') ids = ids.substr(1, ids.find(']') - 1);
        for (int64_t t : parse_array_spec(ids)) tasks[t] = st;
    }
    return tasks;
}

std::map<int64_t, TaskState> parse_sacct(const std::string &text, const std::string &job_id) {
    std::map<int64_t, TaskState> tasks;
    const std::string prefix = job_id + "_";
    for (auto &line : split(text, '\n')) {
        auto f = split(trim(line), '|');
        if (f.size() < 4) continue;
        TaskState st{f[1].substr(0, f[1].find(' ')), "", f[3], f[2]};  // "CANCELLED by 0" -> CANCELLED
        if (f[0] == job_id) tasks[-1] = st;  // not an array
        if (f[0].rfind(prefix, 0) != 0) continue;
        std::string ids = f[0].substr(prefix.size());
        if (ids.find('.') != std::string::npos) continue;  // a step (17_2.batch), not the task
        if (!ids.empty() && ids.front() == '[') ids = ids.substr(1, ids.find(']') - 1);
        for (int64_t t : parse_array_spec(ids)) tasks[t] = st;
    }
    return tasks;
}

std::string format_submission(const Submission &s) {
    std::string line = "kind=" + s.kind + "\tjob=" + s.job_id;
    if (s.kind == "array")
        line += "\ttasks=" + array_spec(s.tasks) + "\tof=" + std::to_string(s.of) + "\tsweep=" + s.sweep_file;
    if (!s.after.empty()) line += "\tafter=" + s.after;
    return line + "\tutc=" + s.utc;
}

std::vector<Submission> read_submissions(const std::string &jobs_path) {
    std::vector<Submission> out;
    std::ifstream in(jobs_path);
    std::string line;
    for (int number = 1; std::getline(in, line); number++) {
        if (trim(line).empty()) continue;
        Submission s;
        for (auto &field : split(line, '\t')) {
            auto eq = field.find('=');
            const std::string key = field.substr(0, eq), value = eq == std::string::npos ? "" : field.substr(eq + 1);
            if (key == "kind") s.kind = value;
            else if (key == "job") s.job_id = value;
            else if (key == "tasks") s.tasks = parse_array_spec(value);
            else if (key == "of") s.of = parse_task(value, jobs_path + ":" + std::to_string(number) + ": of");
            else if (key == "sweep") s.sweep_file = value;
            else if (key == "after") s.after = value;
            else if (key == "utc") s.utc = value;
        }
        if (s.kind.empty() || s.job_id.empty()) fail(jobs_path, ":", number, ": not a submission line: '", line, "'");
        out.push_back(s);
    }
    return out;
}

void append_submission(const std::string &jobs_path, const Submission &s) {
    fs::create_directories(fs::path(jobs_path).parent_path());
    std::ofstream out(jobs_path, std::ios::app);
    out << format_submission(s) << "\n";
    if (!out) fail(jobs_path, ": cannot record the submission (job ", s.job_id, ")");
}

TaskRecord read_task_record(const std::string &state_path) {
    TaskRecord r;
    std::ifstream in(state_path);
    std::string line;
    while (std::getline(in, line)) {
        auto f = split(trim(line), ' ');
        if (f.size() >= 2 && f[0] == "started") {
            r = TaskRecord{true, false, 0, f[1]};
        } else if (f.size() >= 2 && f[0] == "exit") {
            r.exited = true;
            r.exit_code = static_cast<int>(parse_task(f[1], state_path + ": exit code"));
        }
    }
    return r;
}

ShardProgress shard_progress(const Sweep &sweep, const Shard &shard, const std::string &shard_file, bool retry_failed) {
    ShardProgress p;
    ResultTable table;
    if (fs::exists(shard_file)) table = read_results(shard_file);
    for (const PlannedRun *run : shard_runs(sweep, shard)) {
        p.runs++;
        const int64_t at = table.index_of(run->id);
        const std::string status = at >= 0 ? table.str(static_cast<size_t>(at), "status") : "";
        if (!status.empty()) p.status[status]++;
        const auto attempts = at >= 0 ? static_cast<int64_t>(table.num(static_cast<size_t>(at), "attempts")) : 0;
        const NextStep step = next_step(status, attempts, retry_failed);
        if (step == NextStep::Run) p.to_run++;
        else if (step == NextStep::Skip) p.done++;
    }
    return p;
}

int64_t seed_shard(const Sweep &sweep, const Shard &shard, const std::string &output, const std::string &shard_file) {
    if (!fs::exists(output) || fs::exists(shard_file)) return 0;
    const ResultTable all = read_results(output);
    ResultTable part;
    part.attrs = all.attrs;
    for (auto &[name, kind] : result_schema()) part.add_column(name, kind);
    for (const PlannedRun *run : shard_runs(sweep, shard)) {
        const int64_t at = all.index_of(run->id);
        if (at >= 0) part.append(all.row(static_cast<size_t>(at)));
    }
    if (part.rows() == 0) return 0;
    WriterLock lock(shard_file);
    write_results(shard_file, part);
    return static_cast<int64_t>(part.rows());
}

const char *verdict_name(TaskVerdict v) {
    switch (v) {
        case TaskVerdict::Pending: return "pending";
        case TaskVerdict::Running: return "running";
        case TaskVerdict::Done: return "done";
        case TaskVerdict::Failed: return "failed";
        case TaskVerdict::Interrupted: return "interrupted";
        case TaskVerdict::NotSubmitted: return "not submitted";
    }
    return "?";
}

TaskVerdict task_verdict(const TaskState *slurm, const TaskRecord &record, const ShardProgress &progress) {
    if (slurm && is_live(slurm->state))
        return slurm->state == "RUNNING" || slurm->state == "COMPLETING" ? TaskVerdict::Running : TaskVerdict::Pending;
    if (!has_work(progress)) return TaskVerdict::Done;  // a `running` run killed twice counts as left
    if (record.exited && record.exit_code != 0 && record.exit_code != 1) return TaskVerdict::Failed;
    if (slurm && slurm->state == "FAILED") return TaskVerdict::Failed;
    if (record.started || slurm) return TaskVerdict::Interrupted;
    return TaskVerdict::NotSubmitted;
}

}  // namespace qrnn::sweep::slurm
