// `qrnn run`: time (and verify, dump) one model configuration, or the cartesian product of listed values.
#include <map>
#include <set>
#include <algorithm>
#include <iostream>

#include "core/error.h"
#include "plugins/model.h"
#include "harness/experiment.h"
#include "runtime/compare.h"
#include "runtime/memory_guard.h"
#include "tools/command.h"
#include "tools/options.h"
#include "report/table.h"

namespace po = boost::program_options;

namespace qrnn::cli {
namespace {

// "precision" stands for both of a model's precision options ("precision": bf16; "int8").
bool uses(const ModelPlugin &p, const std::string &option) {
    auto has = [&](const std::string &o) { return std::count(p.options.begin(), p.options.end(), o) > 0; };
    return option == "precision" ? has("precision") || has("int8") : has(option);
}

// Options that only some models use; the others ignore them (with a note) and keep their defaults.
// (--load/--dump for a model without them is an error, from run_experiment.)
const char *const kModelOptions[] = {"pooling", "window", "layers", "schedule", "knob",
                                     "target", "precision", "mode", "zoneout", "dropout"};

// One config per (model, pooling, size...) combination; a model's unused options keep their defaults.
std::vector<ModelConfig> expand(const po::variables_map &vm, const ModelConfig &base) {
    std::vector<ModelConfig> all;
    for (auto &model : split_list("model", vm["model"].as<std::string>())) {
        const ModelPlugin &plugin = find_model(model);
        ModelConfig first = base;
        first.model = model;
        const ModelConfig defaults;
        if (!uses(plugin, "layers")) first.layers = defaults.layers;
        if (!uses(plugin, "mode")) first.stochastic = false;
        if (!uses(plugin, "zoneout")) first.zoneout = 0;
        if (!uses(plugin, "dropout")) first.dropout = 0;
        if (!uses(plugin, "schedule")) first.schedule = "-";
        if (!uses(plugin, "target")) first.target = defaults.target;
        if (!uses(plugin, "precision")) first.precision = defaults.precision;
        if (!uses(plugin, "pooling")) first.pooling = "-";
        for (const char *option : kModelOptions)
            if (vm.count(option) && !vm[option].defaulted() && !uses(plugin, option))
                std::cerr << "note: model '" << model << "' ignores --" << option << "\n";
        std::vector<ModelConfig> configs{first};
        auto product = [&](const auto &values, const auto &set) {
            std::vector<ModelConfig> next;
            for (auto &c : configs)
                for (auto &v : values) set(next.emplace_back(c), v);
            configs = std::move(next);
        };
        if (uses(plugin, "pooling"))
            product(split_list("pooling", vm["pooling"].as<std::string>()),
                    [](ModelConfig &c, const std::string &v) { c.pooling = v; });
        if (uses(plugin, "precision"))
            product(split_list("precision", vm["precision"].as<std::string>()),
                    [](ModelConfig &c, const std::string &v) { c.precision = v; });
        const std::pair<const char *, int64_t ModelConfig::*> sizes[] = {
            {"window", &ModelConfig::window}, {"batch", &ModelConfig::batch}, {"seq", &ModelConfig::seq},
            {"input", &ModelConfig::input},   {"hidden", &ModelConfig::hidden}};
        for (auto &[name, member] : sizes) {
            if (std::string(name) == "window" && !uses(plugin, "window")) continue;
            product(parse_int_list(name, vm[name].as<std::string>()),
                    [member = member](ModelConfig &c, int64_t v) { c.*member = v; });
        }
        all.insert(all.end(), configs.begin(), configs.end());
    }
    return all;
}

Knobs parse_knobs(const std::vector<std::string> &items) {
    Knobs knobs;
    for (auto &item : items) {
        auto eq = item.find('=');
        if (eq == std::string::npos || eq == 0) fail("--knob: '", item, "' is not NAME=VALUE");
        const std::string knob = item.substr(0, eq);
        std::vector<int64_t> values = parse_int_list("knob", item.substr(eq + 1));
        if (values.size() != 1) fail("--knob: '", item, "' gives more than one value");
        knobs[knob] = knob_value(knob, values[0]);
    }
    return knobs;
}

po::options_description run_options() {
    po::options_description desc("qrnn run options (size options take comma-separated lists: a table of all combinations)");
    desc.add_options()("help,h", "show this help")
        ("model", po::value<std::string>()->default_value("qrnn"), "model(s), e.g. qrnn,lstm-onednn (`qrnn plugins`)")
        ("pooling", po::value<std::string>()->default_value("fo"), "pooling variant(s), e.g. f, fo, ifo")
        ("window", po::value<std::string>()->default_value("2"), "convolution window(s) k >= 1")
        ("batch", po::value<std::string>()->default_value("16"), "batch size(s) B")
        ("seq", po::value<std::string>()->default_value("128"), "sequence length(s) T")
        ("input", po::value<std::string>()->default_value("320"), "input channels n")
        ("hidden", po::value<std::string>()->default_value("320"), "hidden units m")
        ("layers", po::value<int64_t>()->default_value(1), "stacked layers L")
        ("schedule", po::value<std::string>()->default_value("tuned"), "schedule name (qrnn schedules)")
        ("knob", po::value<std::vector<std::string>>()->composing(), "schedule knob NAME=VALUE (repeatable)")
        ("target", po::value<std::string>()->default_value(""), "Halide target, e.g. host-cuda (default: host JIT)")
        ("precision", po::value<std::string>()->default_value("f32"),
         "conv operands: f32, bf16 (rounded to bfloat16, f32 accumulation; emulated without avx512_bf16) or int8 (QRNN "
         "inference: calibrated int8, int32 accumulation, docs/int8.md), or a list")
        ("mode", po::value<std::string>()->default_value("eval"), "eval, or train (applies zoneout and dropout)")
        ("zoneout", po::value<std::string>()->default_value("0"), "zoneout rate in [0,1) (train mode)")
        ("dropout", po::value<std::string>()->default_value("0"), "dropout rate between layers in [0,1) (train mode)")
        ("pass", po::value<std::string>()->default_value("inference"),
         "inference (forward), or training: forward saving a tape + backward of sum(dh*h), every gradient")
        ("seed", po::value<uint32_t>()->default_value(1), "seed of initialisation and masks")
        ("warmup", po::value<int>()->default_value(1), "untimed runs before timing")
        ("repeats", po::value<int>()->default_value(5), "timed runs (median/min/max reported)")
        ("interleave", "time the configurations side by side: build all, then each repeat runs each once in turn")
        ("verify", "compare with the double-precision reference; exit 1 if rel error > tolerance")
        ("tolerance", po::value<double>()->default_value(kDefaultTolerance), "max relative error accepted by --verify (default for bf16: 2e-3)")
        ("max-memory", po::value<std::string>(), "refuse a run estimated to need more, e.g. 8G (default: 80% of RAM)")
        ("load", po::value<std::string>(), "take inputs and parameters from this HDF5 dump")
        ("dump", po::value<std::string>(), "write inputs, parameters and outputs to this HDF5 file (qrnn; with --pass training also every gradient, for any trainable model: README \"Dump file\")")
        ("dry-run", "validate the configurations (sizes, knobs, memory) and list them; run nothing");
    return desc;
}

// The settings every configuration shares (model list, layers, schedule, target, mode, rates, seed, pass).
ModelConfig shared_config(const po::variables_map &vm) {
    ModelConfig base;
    base.model = vm["model"].as<std::string>();  // a list: expand() makes one config per model
    base.layers = vm["layers"].as<int64_t>();
    base.schedule = vm["schedule"].as<std::string>();
    base.target = vm["target"].as<std::string>();
    std::string mode = vm["mode"].as<std::string>();
    if (mode != "eval" && mode != "train") fail("--mode must be eval or train (got '", mode, "')");
    base.stochastic = mode == "train";
    base.zoneout = parse_double("zoneout", vm["zoneout"].as<std::string>());
    base.dropout = parse_double("dropout", vm["dropout"].as<std::string>());
    base.seed = vm["seed"].as<uint32_t>();
    base.pass = vm["pass"].as<std::string>();
    return base;
}

RunOptions run_settings(const po::variables_map &vm) {
    RunOptions opts;
    opts.warmup = vm["warmup"].as<int>();
    opts.repeats = vm["repeats"].as<int>();
    if (opts.warmup < 0) fail("--warmup must be >= 0 (got ", opts.warmup, ")");
    if (opts.repeats < 1) fail("--repeats must be >= 1 (got ", opts.repeats, ")");
    opts.verify = vm.count("verify") > 0;
    if (vm.count("load")) opts.load_path = vm["load"].as<std::string>();
    if (vm.count("dump")) opts.dump_path = vm["dump"].as<std::string>();
    if (vm.count("max-memory")) opts.max_memory = parse_memory_size("max-memory", vm["max-memory"].as<std::string>());
    if (vm.count("knob")) opts.knobs = parse_knobs(vm["knob"].as<std::vector<std::string>>());
    return opts;
}

std::vector<std::string> results_header(bool verify, bool several, bool training_pass, bool with_precision) {
    std::vector<std::string> header{"model", "pooling", "k", "B", "T", "n", "m", "L", "schedule", "mode",
                                    "median_ms", "min_ms", "max_ms", "GFLOP/s"};
    if (verify) header.insert(header.end(), {"max_abs_err", "max_rel_err", "check"});
    if (several) header.insert(header.begin() + 14, "vs_first");
    if (training_pass) header.insert(header.begin() + 10, "pass");
    if (with_precision) header.insert(header.begin() + 10, "precision");
    return header;
}

// One configuration's row; `ok` false where --verify found it above the tolerance.
std::vector<std::string> results_row(const ModelConfig &c, const RunReport &r, double first_ms, bool several,
                                     bool training_pass, bool with_precision, double tolerance, bool &ok) {
    const bool has_window = uses(find_model(c.model), "window");
    std::vector<std::string> row{c.model, c.pooling, has_window ? std::to_string(c.window) : "-", std::to_string(c.batch),
                                 std::to_string(c.seq), std::to_string(c.input), std::to_string(c.hidden),
                                 std::to_string(c.layers), c.schedule, c.stochastic ? "train" : "eval",
                                 fixed(r.timing.median(), 3), fixed(r.timing.min(), 3), fixed(r.timing.max(), 3),
                                 fixed(r.gflops, 1)};
    if (several) row.push_back(fixed(r.timing.median() / first_ms, 2));
    if (training_pass) row.insert(row.begin() + 10, c.pass);
    if (with_precision) row.insert(row.begin() + 10, c.precision);
    ok = true;
    if (r.error) {
        ok = r.error->finite && r.error->rel() <= tolerance;
        row.insert(row.end(), {scientific(r.error->max_abs), scientific(r.error->rel()), ok ? "ok" : "FAIL"});
    }
    return row;
}

// Every configuration checked before anything runs; false (after listing them) for --dry-run.
bool check_configs(const po::variables_map &vm, const std::vector<ModelConfig> &configs, RunOptions &opts) {
    for (auto &c : configs) {
        validate_model_config(c);
        check_model_memory(c, opts);
        if (uses(find_model(c.model), "schedule")) merge_knobs(find_layer_schedule(c.schedule), opts.knobs);
    }
    if (vm.count("dry-run")) {
        for (auto &c : configs) std::cout << c.describe() << "\n";
        std::cout << configs.size() << " configurations valid; nothing run (--dry-run)\n";
        return false;
    }
    if (configs.size() > 1 && (!opts.load_path.empty() || !opts.dump_path.empty()))
        fail("--load and --dump take a single configuration, got ", configs.size());
    return true;
}

// Per precision whose own default tolerances applied instead of `tolerance`: each value, with the models held to it.
using OwnTolerances = std::map<std::string, std::map<double, std::set<std::string>>>;

// " (bf16: 2.00e-03)"; the models named where one precision's differ: " (bf16: 2.00e-03 qrnn-dense, 3.91e-03 qrnn-bidir)".
std::string own_tolerances_text(const OwnTolerances &own) {
    std::string text;
    for (const auto &[precision, values] : own) {
        text += (text.empty() ? " (" : ", ") + precision + ":";
        const char *before_value = " ";
        for (const auto &[value, models] : values) {
            text += before_value + scientific(value);
            before_value = ", ";
            if (values.size() == 1) continue;
            const char *before_model = " ";
            for (const std::string &model : models) text += before_model + model, before_model = "/";
        }
    }
    return text.empty() ? text : text + ")";
}

void print_verdicts(const RunOptions &opts, bool all_ok, double tolerance, bool training_pass, const OwnTolerances &own_tolerances) {
    const std::string own = own_tolerances_text(own_tolerances);
    if (opts.verify)
        std::cout << (all_ok ? "verify: all within" : "verify: FAILED, some above") << " max relative error "
                  << scientific(tolerance) << own
                  << (training_pass ? " (max|y-ref| / max|ref| of the worst of h and every gradient, float vs double)\n"
                                    : " (max|y-ref| / max|ref| over every output, float vs double)\n");
    if (!opts.dump_path.empty())
        std::cout << "dump: wrote " << opts.dump_path
                  << (all_ok ? "" : " (verify FAILED: its outputs are this run's, above the tolerance)") << "\n";
}

int run_command(const std::vector<std::string> &args) {
    po::variables_map vm;
    if (!parse_options("usage: qrnn run [options]", run_options(), args, vm)) return kExitOk;
    const ModelConfig base = shared_config(vm);
    RunOptions opts = run_settings(vm);
    const double tolerance = vm["tolerance"].as<double>();
    if (!valid_tolerance(tolerance)) fail("--tolerance must be a finite number > 0 (got ", tolerance, ")");
    const std::vector<ModelConfig> configs = expand(vm, base);
    if (!check_configs(vm, configs, opts)) return kExitOk;
    if (!base.stochastic && (base.zoneout > 0 || base.dropout > 0))
        std::cerr << "note: --zoneout/--dropout apply only with --mode train\n";

    const bool training_pass = base.training_pass(), several = configs.size() > 1;
    const bool with_precision = !vm["precision"].defaulted();
    Table table(results_header(opts.verify, several, training_pass, with_precision));
    std::vector<std::string> skipped;
    std::vector<ModelConfig> runnable;
    for (auto &c : configs) {
        std::string why = model_unavailable(find_model(c.model), c);
        if (why.empty()) runnable.push_back(c);
        else skipped.push_back("skipped: model '" + c.model + "' unavailable: " + why);
    }
    std::vector<RunReport> reports;
    if (vm.count("interleave")) reports = run_experiments_interleaved(runnable, opts);
    bool all_ok = true;
    OwnTolerances own_tolerances;
    double first_ms = 0;
    for (size_t i = 0; i < runnable.size(); i++) {
        RunReport r = vm.count("interleave") ? reports[i] : run_experiment(runnable[i], opts);
        if (first_ms == 0) first_ms = r.timing.median();
        bool ok = true;
        const double own = vm["tolerance"].defaulted() ? verify_tolerance(runnable[i]) : tolerance;
        if (own != tolerance) own_tolerances[runnable[i].precision][own].insert(runnable[i].model);
        table.add(results_row(runnable[i], r, first_ms, several, training_pass, with_precision, own, ok));
        all_ok = all_ok && ok;
    }
    if (skipped.size() < configs.size()) table.print(std::cout);
    for (auto &line : skipped) std::cout << line << "\n";
    if (skipped.size() == configs.size()) return kExitUnavailable;
    print_verdicts(opts, all_ok, tolerance, training_pass, own_tolerances);
    return all_ok ? kExitOk : kExitCheckFailed;
}

const bool cmd_run_registered = register_command({"run", "time a model (and --verify against the reference, --dump to HDF5)", run_command});
}  // namespace
}  // namespace qrnn::cli
