// `qrnn autotune`: searches schedules and knobs for one layer shape, or for every QRNN layer shape of a sweep
// (--sweep); every trial is appended to the tuning database, so Ctrl-C (or a crash) keeps all that was measured.
// `qrnn run --schedule tuned-db` uses it. A trial's pipeline is compiled once for all shapes (shape-generic
// schedules) and a trial whose first run is --prune times slower than the best so far is not timed further.
#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>
#include <set>

#include "core/error.h"
#include "harness/autotuner.h"
#include "plugins/model.h"
#include "runtime/compiled_layer.h"
#include "schedules/cpu_target.h"
#include "sweep/sweep_spec.h"
#include "tools/command.h"
#include "bench/gemm_autotune.h"
#include "tools/options.h"
#include "tools/progress_bar.h"
#include "report/table.h"

namespace po = boost::program_options;

namespace qrnn::cli {
namespace {

std::atomic<bool> interrupted{false};
extern "C" void on_sigint(int) {
    interrupted = true;
    std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends at once
}

void progress(const std::string &prefix, int done, int total_trials, double elapsed, double budget_s,
              const std::optional<TuningRecord> &best) {
    double fraction = total_trials > 0 ? static_cast<double>(done) / total_trials : std::min(1.0, elapsed / budget_s);
    double eta = total_trials > 0 ? (done ? elapsed / done * (total_trials - done) : 0) : budget_s - elapsed;
    draw_progress(prefix, fraction, done, total_trials, elapsed, eta,
                  best ? "best " + fixed(best->median_ms, 3) + " ms " + best->schedule : "");
}

// --gemm: the GEMM core's knobs (bench/gemm_autotune.h) at the LM's B=20 T=105 unless --seq/--batch are given.
int autotune_gemm(const po::variables_map &vm) {
    GemmAutotuneOptions o;
    o.target = parse_target(vm["target"].as<std::string>());
    if (o.target.has_gpu_feature() || !cpu_runs(o.target))
        fail("--target ", o.target.to_string(), ": not a CPU target this machine can run (CPU: ", cpu_info().isa, ")");
    o.db = vm["db"].as<std::string>();
    o.warmup = vm["warmup"].as<int>();
    o.repeats = vm["repeats"].as<int>();
    o.trials = vm["trials"].as<int>();
    o.seconds = vm["seconds"].defaulted() ? 300 : vm["seconds"].as<double>();
    if (o.trials < 0 || o.seconds < 0) fail("--trials and --seconds must be >= 0");
    if (o.warmup < 0 || o.repeats < 1) fail("--warmup must be >= 0 and --repeats >= 1");
    const int64_t T = vm["seq"].defaulted() ? 105 : vm["seq"].as<int64_t>();
    const int64_t B = vm["batch"].defaulted() ? 20 : vm["batch"].as<int64_t>();
    const int64_t k = vm["window"].as<int64_t>();
    if (T < 1 || B < 1 || k < 1) fail("--seq, --batch and --window must be >= 1");
    for (int64_t w : parse_int_list("gemm-widths", vm["gemm-widths"].as<std::string>())) {
        if (w < 1) fail("--gemm-widths: every width must be >= 1 (got ", w, ")");
        o.shapes.push_back({T, B, w, w, k});
    }
    o.pooling = &pooling_option(vm);
    read_tuning_records(o.db);  // a malformed database fails now, not after the search
    interrupted = false;
    auto previous = std::signal(SIGINT, on_sigint);
    const int rc = gemm_autotune(o, interrupted);
    std::signal(SIGINT, previous);
    return rc;
}

po::options_description autotune_options() {
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
        ("prune", po::value<double>()->default_value(1.5),
         "stop timing a trial whose first run is this many times the best median so far (0: never)")
        ("sweep", po::value<std::string>(),
         "tune every QRNN layer shape (pooling, T, B, n, m, k) of this sweep file; --trials and --seconds are then "
         "per shape and for all shapes")
        ("gemm", "tune the GEMM core's register tiles and block sizes for this CPU and --target instead of a layer's "
                 "schedule (conv, dW and dX against the best sgemm; --seconds defaults to 300); every op on the core "
                 "then uses the best")
        ("gemm-widths", po::value<std::string>()->default_value("320,1024"),
         "--gemm: the widths n = m it measures, at --seq (default 105) x --batch (default 20), k = --window")
        ("db", po::value<std::string>()->default_value(default_tuning_db_path()), "tuning database (JSON lines, appended)")
        ("seed", po::value<uint32_t>()->default_value(1), "seed of the data and of the random search");
    return desc;
}

// The layer search's budget and timing, checked.
struct LayerSearch {
    int trials = 0, warmup = 1, repeats = 5;
    double seconds = 0, prune = 1.5, tolerance = 1e-4;
    std::string db, target;  // target: as given (the trials' pipelines parse it themselves)
    Halide::Target halide_target;
    std::vector<std::string> schedules;
};
LayerSearch layer_search(const po::variables_map &vm) {
    LayerSearch s;
    s.trials = vm["trials"].as<int>(), s.warmup = vm["warmup"].as<int>(), s.repeats = vm["repeats"].as<int>();
    s.seconds = vm["seconds"].as<double>(), s.prune = vm["prune"].as<double>(), s.tolerance = vm["tolerance"].as<double>();
    if (s.trials < 0) fail("--trials must be >= 0 (got ", s.trials, ")");
    if (s.seconds < 0) fail("--seconds must be >= 0 (got ", s.seconds, ")");
    if (s.trials == 0 && s.seconds == 0) fail("give a budget: --trials N and/or --seconds S");
    if (s.warmup < 0 || s.repeats < 1) fail("--warmup must be >= 0 and --repeats >= 1");
    if (!(s.prune == 0 || s.prune >= 1)) fail("--prune must be 0 (off) or >= 1 (got ", s.prune, ")");
    s.db = vm["db"].as<std::string>(), s.target = vm["target"].as<std::string>();
    read_tuning_records(s.db);  // a malformed database fails now, not after the search
    s.schedules = split_list("schedules", vm["schedules"].as<std::string>());
    s.halide_target = parse_target(s.target);
    return s;
}

ModelConfig layer_config(const po::variables_map &vm) {
    ModelConfig cfg;
    cfg.model = vm["model"].as<std::string>();
    cfg.pooling = vm["pooling"].as<std::string>();
    cfg.window = vm["window"].as<int64_t>();
    cfg.batch = vm["batch"].as<int64_t>();
    cfg.seq = vm["seq"].as<int64_t>();
    cfg.input = vm["input"].as<int64_t>();
    cfg.hidden = vm["hidden"].as<int64_t>();
    cfg.seed = vm["seed"].as<uint32_t>();
    validate_model_config(cfg);
    return cfg;
}

// The shapes: this one, or every distinct QRNN layer of the sweep (each layer of a stack is its own shape).
std::vector<ModelConfig> shapes_to_tune(const po::variables_map &vm, const ModelConfig &cfg) {
    if (!vm.count("sweep")) return {cfg};
    std::vector<ModelConfig> shapes;
    std::set<std::string> seen;
    for (auto &run : sweep::load_sweep(vm["sweep"].as<std::string>()).runs) {
        const ModelConfig &c = run.spec.config;
        if (c.model != "qrnn") continue;
        for (int64_t l = 0; l < c.layers; l++) {
            ModelConfig one = cfg;
            one.pooling = c.pooling, one.window = c.window, one.batch = c.batch, one.seq = c.seq;
            one.input = c.layer_input(l), one.hidden = c.hidden;
            if (seen.insert(one.describe()).second) shapes.push_back(one);
        }
    }
    if (shapes.empty()) fail("--sweep ", vm["sweep"].as<std::string>(), ": no qrnn runs to tune");
    return shapes;
}

bool is_tuned_default(const TuningRecord &r, const Halide::Target &target) {
    return r.schedule == "tuned" && r.knobs == default_knobs(find_layer_schedule("tuned"), target);
}

struct SearchOutcome {
    std::vector<TuningRecord> done;
    std::optional<TuningRecord> best, tuned_default;  // of the last shape
};

// Each shape's trials until its budget (an equal share of the time left) runs out or Ctrl-C; every trial appended to
// the database as it completes.
SearchOutcome search_shapes(const std::vector<ModelConfig> &shapes, const LayerSearch &s, uint32_t seed) {
    interrupted = false;
    auto previous = std::signal(SIGINT, on_sigint);
    auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    SearchOutcome out;
    for (size_t si = 0; si < shapes.size() && !interrupted; si++) {
        const ModelConfig &shape_cfg = shapes[si];
        const std::string prefix = shapes.size() > 1 ? "shape " + std::to_string(si + 1) + "/" + std::to_string(shapes.size()) + " " : "";
        const double shape_start = elapsed();
        const double shape_budget = s.seconds > 0 ? (s.seconds - shape_start) / static_cast<double>(shapes.size() - si) : 0;
        CandidateGenerator generator(s.schedules, seed, s.halide_target);  // same seed: same candidates, compiled once
        std::cerr << "autotune: " << prefix << shape_cfg.describe() << "\nautotune: computing the reference...\n";
        TrialRunner runner(shape_cfg, s.target, s.warmup, s.repeats, s.tolerance);
        int shape_trials = 0;
        out.best.reset();
        out.tuned_default.reset();
        auto shape_elapsed = [&] { return elapsed() - shape_start; };
        while (!interrupted && (s.trials == 0 || shape_trials < s.trials) && (s.seconds == 0 || shape_elapsed() < shape_budget)) {
            progress(prefix, shape_trials, s.trials, shape_elapsed(), shape_budget, out.best);
            auto candidate = generator.next();
            if (!candidate) break;
            double prune_ms = s.prune > 0 && out.best ? s.prune * out.best->median_ms : std::numeric_limits<double>::infinity();
            TuningRecord r = runner.run(*candidate, prune_ms);
            append_tuning_record(s.db, r);
            if (r.status == "ok" && (!out.best || r.median_ms < out.best->median_ms)) out.best = r;
            if (is_tuned_default(r, s.halide_target)) out.tuned_default = r;
            out.done.push_back(std::move(r));
            shape_trials++;
        }
        progress(prefix, shape_trials, s.trials, shape_elapsed(), shape_budget, out.best);
        std::cerr << "\n";
    }
    std::signal(SIGINT, previous);
    if (interrupted) std::cerr << "autotune: interrupted; the " << out.done.size() << " measured trials are kept in " << s.db << "\n";
    return out;
}

// Several shapes: one row per shape, its best schedule against tuned's defaults.
void print_shapes(const std::vector<ModelConfig> &shapes, const SearchOutcome &o, const LayerSearch &s) {
    Table table({"shape", "trials", "best schedule", "best_ms", "tuned_ms", "speed-up"});
    for (auto &shape_cfg : shapes) {
        LayerShape shape{shape_cfg.seq, shape_cfg.batch, shape_cfg.input, shape_cfg.hidden, shape_cfg.window};
        std::optional<TuningRecord> b, d;
        int n = 0;
        for (auto &r : o.done) {
            if (r.shape.key() != shape.key() || r.pooling != shape_cfg.pooling) continue;
            n++;
            if (r.status == "ok" && (!b || r.median_ms < b->median_ms)) b = r;
            if (is_tuned_default(r, s.halide_target)) d = r;
        }
        table.add({shape_cfg.pooling + " " + shape.key(), std::to_string(n), b ? b->schedule : "-", b ? fixed(b->median_ms, 3) : "-",
                   d ? fixed(d->median_ms, 3) : "-", b && d ? fixed(d->median_ms / b->median_ms, 2) + "x" : "-"});
    }
    table.print(std::cout);
    std::cout << "autotune: " << o.done.size() << " trials over " << shapes.size() << " shapes appended to " << s.db
              << "\nautotune: use them with: qrnn run --schedule tuned-db (QRNN_TUNING_DB=" << s.db << ")\n";
}

// One shape: every trial, then the best against tuned's defaults.
void print_trials(const SearchOutcome &o, const std::string &db) {
    Table table({"schedule", "knobs", "status", "median_ms", "rel_err", "error"});
    for (auto &r : o.done) {
        std::string knobs;
        for (auto &kv : r.knobs) knobs += (knobs.empty() ? "" : ",") + kv.first + "=" + std::to_string(kv.second);
        std::string err = r.error.substr(0, r.error.find('\n')).substr(0, 60);
        table.add({r.schedule, knobs.empty() ? "-" : knobs, r.status, r.status == "failed" ? "-" : fixed(r.median_ms, 3),
                   r.status == "failed" ? "-" : scientific(r.rel_error), err.empty() ? "-" : err});
    }
    table.print(std::cout);
    std::cout << "autotune: " << o.done.size() << " trials appended to " << db << "\n";
    if (!o.best) {
        std::cout << "autotune: no verified trial\n";
        return;
    }
    std::cout << "autotune: best " << o.best->schedule << " " << fixed(o.best->median_ms, 3) << " ms";
    if (o.tuned_default)
        std::cout << "; tuned (defaults) " << fixed(o.tuned_default->median_ms, 3) << " ms; speed-up "
                  << fixed(o.tuned_default->median_ms / o.best->median_ms, 2) << "x";
    std::cout << "\nautotune: use it with: qrnn run --schedule tuned-db (QRNN_TUNING_DB=" << db << ")\n";
}

int autotune_command(const std::vector<std::string> &args) {
    po::variables_map vm;
    if (!parse_options("usage: qrnn autotune [options]", autotune_options(), args, vm)) return kExitOk;
    if (vm.count("gemm")) return autotune_gemm(vm);
    const ModelConfig cfg = layer_config(vm);
    const LayerSearch search = layer_search(vm);
    const std::vector<ModelConfig> shapes = shapes_to_tune(vm, cfg);
    const SearchOutcome outcome = search_shapes(shapes, search, cfg.seed);
    if (shapes.size() > 1)
        print_shapes(shapes, outcome, search);
    else
        print_trials(outcome, search.db);
    return kExitOk;
}

const bool cmd_autotune_registered = register_command({"autotune", "search schedules/knobs for a shape; record every trial in the tuning DB", autotune_command});
}  // namespace
}  // namespace qrnn::cli
