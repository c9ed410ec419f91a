#include "runtime/timing.h"
#include "sweep/runner.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <set>

#include "core/error.h"
#include "runtime/atomic_file.h"
#include "harness/experiment.h"
#include "runtime/machine_info.h"
#include "sweep/train_run.h"

namespace qrnn::sweep {
namespace {

std::string one_line(std::string s) {
    for (char &ch : s)
        if (ch == '\n' || ch == '\r') ch = ' ';
    return s;
}

std::string clock_str(double seconds) {
    long s = std::lround(std::max(0.0, seconds));
    char buf[32];
    if (s >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
    return buf;
}

std::string label(const PlannedRun &run) {
    if (run.varied.empty()) return run.spec.config.describe();
    std::string s;
    for (auto &[k, v] : run.varied) s += (s.empty() ? "" : " ") + k + "=" + v;
    return s;
}

// What a finished run's progress line reports: a synthetic task's best held-out accuracy and its seconds, else
// the median step time (timing runs and language models).
std::string result_text(const std::map<std::string, Value> &row) {
    char text[128] = "";
    if (row.count("best_accuracy"))
        std::snprintf(text, sizeof text, " best %s %.4f in %.0f s", std::get<std::string>(row.at("metric")).c_str(),
                      std::get<double>(row.at("best_accuracy")), std::get<double>(row.at("train_seconds")));
    else if (std::isfinite(std::get<double>(row.at("median_ms"))))
        std::snprintf(text, sizeof text, " %.3f ms", std::get<double>(row.at("median_ms")));
    return text;
}

class Progress {
public:
    Progress(std::ostream &log, int64_t total, bool interactive) : log_(log), total_(total), interactive_(interactive) {}

    void done(const PlannedRun &run, const std::map<std::string, Value> &row) {
        finished_++;
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
        const double eta = elapsed / finished_ * (total_ - finished_);
        const int width = 20, filled = static_cast<int>(width * finished_ / std::max<int64_t>(total_, 1));
        std::string status = std::get<std::string>(row.at("status"));
        const std::string result = status == kStatusOk ? result_text(row) : "";
        char line[512];
        std::snprintf(line, sizeof line, "[%s%s] %lld/%lld  elapsed %s  ETA %s  #%lld %s: %s%s",
                      std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(),
                      static_cast<long long>(finished_), static_cast<long long>(total_), clock_str(elapsed).c_str(),
                      clock_str(eta).c_str(), static_cast<long long>(run.index), label(run).c_str(), status.c_str(),
                      result.c_str());
        if (interactive_) log_ << "\r\033[K" << line << (finished_ == total_ ? "\n" : "") << std::flush;
        else log_ << line << "\n" << std::flush;
    }

private:
    std::ostream &log_;
    int64_t total_, finished_ = 0;
    bool interactive_;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace

Shard parse_shard(const std::string &text) {
    Shard s;
    auto slash = text.find('/');
    try {
        size_t used = 0;
        if (slash == std::string::npos) throw std::invalid_argument("");
        s.index = std::stoll(text.substr(0, slash), &used);
        if (used != slash) throw std::invalid_argument("");
        s.count = std::stoll(text.substr(slash + 1), &used);
        if (used != text.size() - slash - 1) throw std::invalid_argument("");
    } catch (const std::exception &) {
        fail("--shard: '", text, "' is not i/N (e.g. 0/4)");
    }
    if (s.count < 1 || s.index < 0 || s.index >= s.count) fail("--shard: '", text, "' needs 0 <= i < N");
    return s;
}

std::vector<const PlannedRun *> shard_runs(const Sweep &sweep, const Shard &shard) {
    std::vector<const PlannedRun *> out;
    for (auto &run : sweep.runs)
        if (run.group % shard.count == shard.index) out.push_back(&run);
    return out;
}

namespace {
using Row = std::map<std::string, Value>;

Row start_row(const Sweep &sweep, const PlannedRun &run) {
    Row row{{"run_id", run.id},      {"sweep", sweep.name},      {"index", run.index},
            {"replicate", run.spec.replicate}, {"knobs", knobs_str(run.spec.knobs)}, {"interleaved", int64_t(1)},
            {"status", std::string(kStatusOk)}, {"error", std::string()}, {"attempts", int64_t(1)},
            {"median_ms", kNaN}, {"min_ms", kNaN}, {"max_ms", kNaN}, {"gflops", kNaN},
            {"max_abs_err", kNaN}, {"max_rel_err", kNaN}, {"host", machine_info().host},
            {"started_utc", utc_now_iso()}};
    for (auto &f : run_fields()) row[f.name] = f.get(run.spec);
    if (is_training_run(run.spec)) row["train"] = train_settings(run.spec);  // also on a failed run's row
    return row;
}

RunOptions options_of(const RunSpec &spec) {
    RunOptions opts;
    opts.warmup = static_cast<int>(spec.measure.warmup);
    opts.repeats = static_cast<int>(spec.measure.repeats);
    opts.verify = spec.measure.verify;
    opts.knobs = spec.knobs;
    return opts;
}

void record(Row &row, const RunReport &report, const RunSpec &spec) {
    row["median_ms"] = report.timing.median();
    row["min_ms"] = report.timing.min();
    row["max_ms"] = report.timing.max();
    row["gflops"] = report.gflops;
    if (report.error) {
        const double tolerance = spec.measure.tolerance_for(spec.config);
        row["tolerance"] = tolerance;  // the one applied, where the configuration's default differs from the column's
        row["max_abs_err"] = report.error->max_abs;
        row["max_rel_err"] = report.error->rel();
        if (!report.error->finite || !(report.error->rel() <= tolerance)) {
            row["status"] = std::string(kStatusCheckFailed);
            row["error"] = "max relative error " + value_str(report.error->rel()) + " above tolerance " +
                           value_str(tolerance) + (report.error->finite ? "" : " (non-finite output)");
        }
    }
    row["finished_utc"] = utc_now_iso();
}

void set_row(ResultTable &table, const Row &row) {
    int64_t at = table.index_of(std::get<std::string>(row.at("run_id")));
    if (at >= 0) table.erase(static_cast<size_t>(at));
    table.append(row);
}

// Records the runs as "running" before measuring them, so that if the process dies during them (crash, kill)
// the next sweep knows: it retries such a run once, then records it as crashed. Returns the attempt numbers.
std::vector<int64_t> mark_running(ResultTable &table, const std::string &output, const Sweep &sweep,
                                  const std::vector<const PlannedRun *> &runs) {
    std::vector<int64_t> attempts;
    for (auto *run : runs) {
        int64_t at = table.index_of(run->id);
        Row row = start_row(sweep, *run);
        row["status"] = std::string(kStatusRunning);
        row["attempts"] = (at >= 0 ? static_cast<int64_t>(table.num(static_cast<size_t>(at), "attempts")) : 0) + 1;
        attempts.push_back(std::get<int64_t>(row["attempts"]));
        set_row(table, row);
    }
    table.attrs["updated_utc"] = utc_now_iso();
    write_results(output, table);
    return attempts;
}
}  // namespace

std::string training_checkpoint_dir(const std::string &output) { return output + ".checkpoints"; }

std::map<std::string, Value> measure_run(const Sweep &sweep, const PlannedRun &run, const std::string &checkpoint_dir) {
    Row row = start_row(sweep, run);
    try {
        if (is_training_run(run.spec))
            record_training_run(run.spec, row, std::cerr, checkpoint_dir.empty() ? "" : checkpoint_dir + "/" + run.id + ".h5");
        else record(row, run_experiment(run.spec.config, options_of(run.spec)), run.spec);
    } catch (const Unavailable &e) {
        row["status"] = std::string(kStatusUnavailable);
        row["error"] = one_line(e.what());
    } catch (const std::exception &e) {
        row["status"] = std::string(kStatusFailed);
        row["error"] = one_line(e.what());
    }
    row["finished_utc"] = utc_now_iso();
    return row;
}

std::vector<std::map<std::string, Value>> measure_side_by_side(const Sweep &sweep, const std::vector<const PlannedRun *> &runs,
                                                               const std::string &checkpoint_dir) {
    std::vector<Row> rows;
    if (is_training_run(runs.front()->spec)) {  // training runs are not timed side by side: one after another
        for (auto *run : runs) rows.push_back(measure_run(sweep, *run, checkpoint_dir));
        return rows;
    }
    for (auto *run : runs) rows.push_back(start_row(sweep, *run));
    // The members that can run: if the group as a whole throws, a one-repeat probe of each finds the ones
    // that cannot (failed, unavailable: recorded), and the others are measured side by side.
    std::vector<size_t> live(runs.size());
    for (size_t i = 0; i < runs.size(); i++) live[i] = i;
    for (int attempt = 0; attempt < 2; attempt++) {
        std::vector<ModelConfig> configs;
        for (size_t i : live) configs.push_back(runs[i]->spec.config);
        try {
            // The group shares measurement settings and knobs (interleave keys exclude them).
            std::vector<RunReport> reports = run_experiments_interleaved(configs, options_of(runs[live[0]]->spec));
            for (size_t j = 0; j < live.size(); j++) {
                rows[live[j]]["interleaved"] = static_cast<int64_t>(live.size());
                record(rows[live[j]], reports.at(j), runs[live[j]]->spec);
            }
            return rows;
        } catch (const std::exception &) {
            if (attempt == 1 || live.size() == 1) break;
        }
        std::vector<size_t> ok;
        for (size_t i : live) {
            RunOptions probe = options_of(runs[i]->spec);
            probe.warmup = 0;
            probe.repeats = 1;
            probe.verify = false;
            try {
                run_experiment(runs[i]->spec.config, probe);
                ok.push_back(i);
            } catch (const std::exception &) {
                rows[i] = measure_run(sweep, *runs[i]);  // records its status and error
            }
        }
        if (ok.empty()) return rows;
        live = ok;
    }
    for (size_t i : live) rows[i] = measure_run(sweep, *runs[i]);  // still failing together: each alone
    return rows;
}

void describe_sweep(ResultTable &table, const Sweep &sweep) {
    const MachineInfo m = machine_info();
    table.attrs["format"] = std::string(kResultsFormat);
    table.attrs["format_version"] = int64_t(1);
    table.attrs["sweep_name"] = sweep.name;
    table.attrs["sweep_description"] = sweep.description;
    table.attrs["sweep_file"] = sweep.path;
    table.attrs["sweep_yaml"] = sweep.yaml_text;
    table.attrs["host"] = m.host;
    table.attrs["cpu_model"] = m.cpu_model;
    table.attrs["cpu_id"] = m.cpu_id;
    table.attrs["cpu_isa"] = m.cpu_isa;
    table.attrs["host_target"] = m.host_target;
    table.attrs["cores"] = m.cores;
    table.attrs["halide_version"] = m.halide_version;
    table.attrs["git_commit"] = m.git_commit;
    table.attrs["environment"] = m.environment;
    if (!table.attrs.count("created_utc")) table.attrs["created_utc"] = utc_now_iso();
    table.attrs["updated_utc"] = utc_now_iso();
}

NextStep next_step(const std::string &status, int64_t attempts, bool retry_failed) {
    if (status.empty()) return NextStep::Run;
    if (status == kStatusRunning) {
        if (attempts < kMaxAttempts || retry_failed) return NextStep::Run;
        return NextStep::MarkCrashed;
    }
    return retry_failed && status != kStatusOk ? NextStep::Run : NextStep::Skip;
}

SweepSummary run_sweep(const Sweep &sweep, const RunnerOptions &opts, std::ostream &log) {
    const auto dir = std::filesystem::path(opts.output).parent_path();
    if (!dir.empty()) std::filesystem::create_directories(dir);
    WriterLock lock(opts.output);
    remove_stale_temp_files(opts.output);  // left by a writer killed mid-write; we hold the lock
    ResultTable table;
    if (std::filesystem::exists(opts.output)) table = read_results(opts.output);
    for (auto &[name, kind] : result_schema()) table.add_column(name, kind);
    describe_sweep(table, sweep);
    write_results(opts.output, table);

    SweepSummary summary;
    std::vector<const PlannedRun *> todo;
    for (const PlannedRun *run : shard_runs(sweep, opts.shard)) {
        summary.in_shard++;
        int64_t at = table.index_of(run->id);
        const std::string status = at >= 0 ? table.str(static_cast<size_t>(at), "status") : "";
        const double attempts = at >= 0 ? table.num(static_cast<size_t>(at), "attempts") : 0;
        const NextStep step = next_step(status, static_cast<int64_t>(attempts), opts.retry_failed);
        if (step == NextStep::MarkCrashed) {
            Row row = table.row(static_cast<size_t>(at));
            row["status"] = std::string(kStatusCrashed);
            row["error"] = "the sweep process ended during this run " + value_str(attempts) +
                           " times (a crash, or killed); --retry-failed runs it again";
            set_row(table, row);
            log << "run #" << run->index << " " << label(*run) << ": crashed (" << std::get<std::string>(row["error"]) << ")\n";
        }
        if (step != NextStep::Run) summary.already_done++;
        else todo.push_back(run);
    }
    write_results(opts.output, table);
    log << "sweep " << sweep.name << ": " << sweep.runs.size() << " runs";
    if (opts.shard.count > 1) log << ", " << summary.in_shard << " in shard " << opts.shard.index << "/" << opts.shard.count;
    log << ", " << summary.already_done << " already in " << opts.output << ", " << todo.size() << " to run\n";

    // Interleave groups (one run each without `interleave`), in order of their first run.
    std::vector<std::vector<const PlannedRun *>> groups;
    std::map<int64_t, size_t> group_at;
    for (const PlannedRun *run : todo) {
        auto [it, fresh] = group_at.emplace(run->group, groups.size());
        if (fresh) groups.emplace_back();
        groups[it->second].push_back(run);
    }
    Progress progress(log, static_cast<int64_t>(todo.size()), opts.interactive);
    for (auto &group : groups) {
        const std::vector<int64_t> attempts = mark_running(table, opts.output, sweep, group);
        std::vector<Row> rows = measure_side_by_side(sweep, group, training_checkpoint_dir(opts.output));
        for (size_t i = 0; i < group.size(); i++) {
            rows[i]["attempts"] = attempts[i];
            set_row(table, rows[i]);
        }
        table.attrs["updated_utc"] = utc_now_iso();
        write_results(opts.output, table);
        for (size_t i = 0; i < group.size(); i++) {
            summary.ran++;
            progress.done(*group[i], rows[i]);
        }
    }
    for (const PlannedRun *run : shard_runs(sweep, opts.shard)) {
        int64_t at = table.index_of(run->id);
        if (at >= 0) summary.status[table.str(at, "status")]++;
    }
    return summary;
}

}  // namespace qrnn::sweep
