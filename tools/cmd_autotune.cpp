// `qrnn autotune`: searches schedules and knobs for one layer shape; every trial is appended to the tuning
// database, so Ctrl-C (or a crash) keeps all that was measured. `qrnn run --schedule tuned-db` uses it.
#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>

#include "core/error.h"
#include "runtime/autotuner.h"
#include "tools/command.h"
#include "tools/options.h"
#include "tools/table.h"

namespace po = boost::program_options;

namespace qrnn::cli {
namespace {

std::atomic<bool> interrupted{false};
extern "C" void on_sigint(int) {
    interrupted = true;
    std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends at once
}

std::string seconds_text(double s) {
    int v = static_cast<int>(s + 0.5);
    return v >= 60 ? std::to_string(v / 60) + "m" + std::to_string(v % 60) + "s" : std::to_string(v) + "s";
}

void progress(int done, int total_trials, double elapsed, double budget_s, const std::optional<TuningRecord> &best) {
    double fraction = total_trials > 0 ? static_cast<double>(done) / total_trials : std::min(1.0, elapsed / budget_s);
    double eta = total_trials > 0 ? (done ? elapsed / done * (total_trials - done) : 0) : std::max(0.0, budget_s - elapsed);
    const int width = 24;
    int filled = static_cast<int>(fraction * width);
    std::cerr << "\r[" << std::string(filled, '#') << std::string(width - filled, '.') << "] " << done << " trials"
              << (total_trials > 0 ? "/" + std::to_string(total_trials) : "") << "  elapsed " << seconds_text(elapsed)
              << "  ETA " << seconds_text(eta);
    if (best) std::cerr << "  best " << fixed(best->median_ms, 3) << " ms " << best->schedule;
    std::cerr << "   " << std::flush;
}

int autotune_command(const std::vector<std::string> &args) {
    po::options_description desc("qrnn autotune options (one layer shape; budget: --trials and/or --seconds)");
    desc.add_options()("help,h", "show this help")
        ("model", po::value<std::string>()->default_value("qrnn"), "model: qrnn")
        ("pooling", po::value<std::string>()->default_value("fo"), "pooling variant: f, fo, ifo")
        ("window", po::value<int64_t>()->default_value(2), "convolution window k")
        ("batch", po::value<int64_t>()->default_value(16), "batch size B")
        ("seq", po::value<int64_t>()->default_value(128), "sequence length T")
        ("input", po::value<int64_t>()->default_value(320), "input channels n")
        ("hidden", po::value<int64_t>()->default_value(320), "hidden units m")
        ("target", po::value<std::string>()->default_value(""), "Halide target (default: host JIT)")
        ("schedules", po::value<std::string>()->default_value("tuned,fused,chunked-scan,auto-Mullapudi2016,auto-Li2018,auto-Adams2019"),
         "schedules to search (comma-separated; their defaults are tried first, in this order)")
        ("trials", po::value<int>()->default_value(0), "stop after this many trials (0: no limit)")
        ("seconds", po::value<double>()->default_value(0), "stop after this many seconds (0: no limit)")
        ("warmup", po::value<int>()->default_value(1), "untimed runs per trial")
        ("repeats", po::value<int>()->default_value(5), "timed runs per trial (median kept)")
        ("tolerance", po::value<double>()->default_value(1e-4), "max relative error of a valid trial")
        ("db", po::value<std::string>()->default_value(default_tuning_db_path()), "tuning database (JSON lines, appended)")
        ("seed", po::value<uint32_t>()->default_value(1), "seed of the data and of the random search");
    po::variables_map vm;
    if (!parse_options("usage: qrnn autotune [options]", desc, args, vm)) return kExitOk;

    ModelConfig cfg;
    cfg.model = vm["model"].as<std::string>();
    cfg.pooling = vm["pooling"].as<std::string>();
    cfg.window = vm["window"].as<int64_t>();
    cfg.batch = vm["batch"].as<int64_t>();
    cfg.seq = vm["seq"].as<int64_t>();
    cfg.input = vm["input"].as<int64_t>();
    cfg.hidden = vm["hidden"].as<int64_t>();
    cfg.seed = vm["seed"].as<uint32_t>();
    cfg.validate();
    const int trials = vm["trials"].as<int>(), warmup = vm["warmup"].as<int>(), repeats = vm["repeats"].as<int>();
    const double seconds = vm["seconds"].as<double>();
    if (trials < 0) fail("--trials must be >= 0 (got ", trials, ")");
    if (seconds < 0) fail("--seconds must be >= 0 (got ", seconds, ")");
    if (trials == 0 && seconds == 0) fail("give a budget: --trials N and/or --seconds S");
    if (warmup < 0 || repeats < 1) fail("--warmup must be >= 0 and --repeats >= 1");
    const std::string db = vm["db"].as<std::string>();
    read_tuning_records(db);  // a malformed database fails now, not after the search

    CandidateGenerator generator(split_list("schedules", vm["schedules"].as<std::string>()), cfg.seed);
    std::cerr << "autotune: " << cfg.describe() << "\nautotune: computing the reference...\n";
    TrialRunner runner(cfg, vm["target"].as<std::string>(), warmup, repeats, vm["tolerance"].as<double>());

    interrupted = false;
    auto previous = std::signal(SIGINT, on_sigint);
    auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    std::vector<TuningRecord> done;
    std::optional<TuningRecord> best, tuned_default;
    while (!interrupted && (trials == 0 || static_cast<int>(done.size()) < trials) && (seconds == 0 || elapsed() < seconds)) {
        progress(static_cast<int>(done.size()), trials, elapsed(), seconds, best);
        auto candidate = generator.next();
        if (!candidate) break;
        TuningRecord r = runner.run(*candidate);
        append_tuning_record(db, r);
        if (r.status == "ok" && (!best || r.median_ms < best->median_ms)) best = r;
        if (r.schedule == "tuned" && r.knobs == find_layer_schedule("tuned").defaults) tuned_default = r;
        done.push_back(std::move(r));
    }
    progress(static_cast<int>(done.size()), trials, elapsed(), seconds, best);
    std::cerr << "\n";
    std::signal(SIGINT, previous);
    if (interrupted) std::cerr << "autotune: interrupted; the " << done.size() << " measured trials are kept in " << db << "\n";

    Table table({"schedule", "knobs", "status", "median_ms", "rel_err", "error"});
    for (auto &r : done) {
        std::string knobs;
        for (auto &kv : r.knobs) knobs += (knobs.empty() ? "" : ",") + kv.first + "=" + std::to_string(kv.second);
        std::string err = r.error.substr(0, r.error.find('\n')).substr(0, 60);
        table.add({r.schedule, knobs.empty() ? "-" : knobs, r.status, r.status == "failed" ? "-" : fixed(r.median_ms, 3),
                   r.status == "failed" ? "-" : scientific(r.rel_error), err.empty() ? "-" : err});
    }
    table.print(std::cout);
    std::cout << "autotune: " << done.size() << " trials appended to " << db << "\n";
    if (best) {
        std::cout << "autotune: best " << best->schedule << " " << fixed(best->median_ms, 3) << " ms";
        if (tuned_default)
            std::cout << "; tuned (defaults) " << fixed(tuned_default->median_ms, 3) << " ms; speed-up "
                      << fixed(tuned_default->median_ms / best->median_ms, 2) << "x";
        std::cout << "\nautotune: use it with: qrnn run --schedule tuned-db (QRNN_TUNING_DB=" << db << ")\n";
    } else {
        std::cout << "autotune: no verified trial\n";
    }
    return kExitOk;
}

const bool registered = register_command({"autotune", "search schedules/knobs for a shape; record every trial in the tuning DB", autotune_command});
}  // namespace
}  // namespace qrnn::cli
