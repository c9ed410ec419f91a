// `qrnn report results.h5`: the runs of a sweep results file as a table, their errors, and batch x sequence
// grids in the paper's layout (median times; QRNN speed-ups over baselines, beside the paper's values).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>

#include "core/error.h"
#include "tasks/seq_results.h"
#include "lm/train_results.h"
#include "plugins/model.h"
#include "sweep/speedup_grid.h"
#include "tools/command.h"
#include "report/lm_report.h"
#include "tools/options.h"
#include "report/seq_report.h"
#include "report/table.h"

namespace po = boost::program_options;

namespace qrnn::cli {
namespace {

using sweep::ResultTable;

std::string num(double v, int decimals) { return std::isnan(v) ? "-" : fixed(v, decimals); }

void print_header(const ResultTable &t, const std::string &path) {
    auto attr = [&](const char *name) {
        auto it = t.attrs.find(name);
        return it == t.attrs.end() ? std::string("?") : sweep::value_str(it->second);
    };
    std::cout << path << ": sweep " << attr("sweep_name") << " (" << attr("sweep_file") << "), " << t.rows() << " runs\n"
              << "machine: " << attr("host") << ", " << attr("cpu_model") << " (" << attr("cpu_id") << ", " << attr("cpu_isa")
              << "), " << attr("cores") << " cores; host target " << attr("host_target") << "; Halide " << attr("halide_version") << "; commit " << attr("git_commit") << "; updated " << attr("updated_utc") << "\n";
    if (attr("environment") != "?" && !attr("environment").empty()) std::cout << "environment: " << attr("environment") << "\n";
}

// Whether a run option applies to a model (`qrnn plugins` lists each model's options); models this build
// does not know show every column.
bool option_applies(const std::string &model, const std::string &option) {
    try {
        const auto &options = find_model(model).options;
        return std::find(options.begin(), options.end(), option) != options.end();
    } catch (const Error &) {
        return true;
    }
}

void print_runs(const ResultTable &t) {
    bool knobs = false, replicates = false, verified = false, targets = false;
    for (size_t i = 0; i < t.rows(); i++) {
        knobs = knobs || !t.str(i, "knobs").empty();
        targets = targets || !t.str(i, "target").empty();
        replicates = replicates || t.num(i, "replicate") > 0;
        verified = verified || !std::isnan(t.num(i, "max_rel_err"));
    }
    std::vector<std::string> header{"#", "model", "pooling", "k", "B", "T", "n", "m", "L", "schedule", "mode"};
    if (targets) header.push_back("target");
    if (knobs) header.push_back("knobs");
    if (replicates) header.push_back("rep");
    header.insert(header.end(), {"status", "median_ms", "min_ms", "max_ms", "GFLOP/s"});
    if (verified) header.push_back("max_rel_err");
    Table table(header);
    std::vector<size_t> order(t.rows());
    for (size_t i = 0; i < order.size(); i++) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return t.num(a, "index") < t.num(b, "index"); });
    for (size_t i : order) {
        std::vector<std::string> row;
        const std::string model = t.str(i, "model");
        for (const char *c : {"index", "model", "pooling", "window", "batch", "seq", "input", "hidden", "layers", "schedule", "mode"}) {
            bool optional = std::string(c) == "pooling" || std::string(c) == "window" || std::string(c) == "schedule";
            row.push_back(optional && !option_applies(model, c) ? "-" : t.str(i, c));
        }
        if (targets) row.push_back(t.str(i, "target").empty() ? "host" : t.str(i, "target"));
        if (knobs) row.push_back(t.str(i, "knobs"));
        if (replicates) row.push_back(t.str(i, "replicate"));
        row.insert(row.end(), {t.str(i, "status"), num(t.num(i, "median_ms"), 3), num(t.num(i, "min_ms"), 3),
                               num(t.num(i, "max_ms"), 3), num(t.num(i, "gflops"), 1)});
        if (verified) row.push_back(std::isnan(t.num(i, "max_rel_err")) ? "-" : scientific(t.num(i, "max_rel_err")));
        table.add(row);
    }
    table.print(std::cout);
    std::map<std::string, int> counts;
    for (size_t i = 0; i < t.rows(); i++) counts[t.str(i, "status")]++;
    std::cout << "status:";
    for (auto &[s, c] : counts) std::cout << " " << s << " " << c;
    std::cout << "\n";
    // Runs that did not succeed, grouped by status and error text: "failed (#30-59, 30 runs): ...".
    std::map<std::pair<std::string, std::string>, std::vector<int64_t>> errors;
    for (size_t i : order)
        if (t.str(i, "status") != "ok")
            errors[{t.str(i, "status"), t.str(i, "error")}].push_back(static_cast<int64_t>(t.num(i, "index")));
    for (auto &[what, indices] : errors) {
        std::string list;
        for (size_t a = 0; a < indices.size();) {
            size_t b = a;
            while (b + 1 < indices.size() && indices[b + 1] == indices[b] + 1) b++;
            list += (list.empty() ? "#" : ", #") + std::to_string(indices[a]) + (b > a ? "-" + std::to_string(indices[b]) : "");
            a = b + 1;
        }
        std::cout << "  " << what.first << " (" << list << (indices.size() > 1 ? ", " + std::to_string(indices.size()) + " runs" : "")
                  << "): " << what.second << "\n";
    }
}

// Speed-ups by width, each cell marked NO under the 1.3x that the FLOP ratio (4/3 of the QRNN's GEMM work in the
// LSTM's) allows when both sides run at the machine's GEMM rate.
void print_width_table(const sweep::WidthTable &w) {
    constexpr double kTarget = 1.3;
    std::cout << "\n" << w.title << "\n";
    std::vector<std::string> header{"width"};
    header.insert(header.end(), w.columns.begin(), w.columns.end());
    Table table(header);
    int met = 0, cells = 0;
    for (auto width : w.widths) {
        std::vector<std::string> row{std::to_string(width)};
        for (auto &column : w.columns) {
            auto it = w.cells.find({width, column});
            if (it == w.cells.end()) {
                row.push_back("-");
                continue;
            }
            cells++, met += it->second >= kTarget;
            row.push_back(fixed(it->second, 2) + (it->second >= kTarget ? "" : " NO"));
        }
        table.add(row);
    }
    table.print(std::cout);
    std::cout << "target >= " << fixed(kTarget, 1) << "x: met in " << met << " of " << cells << " cells\n";
}

// A grid and, to its right, other grids of the same layout (label, grid), each in the columns of the first.
using Beside = std::vector<std::pair<std::string, const sweep::Grid *>>;
void print_grid(const sweep::Grid &g, const Beside &beside, int decimals) {
    std::cout << "\n" << g.title << "\n";
    std::vector<std::string> header{"batch\\seq"};
    for (auto s : g.seqs) header.push_back(std::to_string(s));
    for (auto &[label, other] : beside) {
        header.insert(header.end(), {"|", label + ":"});
        for (auto s : g.seqs) header.push_back(std::to_string(s));
    }
    auto cell = [](const sweep::Grid &grid, int64_t b, int64_t s, int places) {
        auto it = grid.cells.find({b, s});
        return it == grid.cells.end() ? std::string("-") : fixed(it->second, places);
    };
    Table table(header);
    for (auto b : g.batches) {
        std::vector<std::string> row{std::to_string(b)};
        for (auto s : g.seqs) row.push_back(cell(g, b, s, decimals));
        for (auto &[label, other] : beside) {
            row.insert(row.end(), {"|", ""});
            for (auto s : g.seqs) row.push_back(cell(*other, b, s, label == "paper" ? 1 : decimals));
        }
        table.add(row);
    }
    table.print(std::cout);
    for (auto &[label, other] : beside) std::cout << "(" << label << ": " << other->title << ")\n";
}

int report_command(const std::vector<std::string> &args) {
    po::options_description desc("qrnn report options");
    desc.add_options()("help,h", "show this help")
        ("file", po::value<std::vector<std::string>>(),
         "sweep results file, or `qrnn train` results files (one or more), or `qrnn train-speed` results files")
        ("paper", po::value<std::string>()->default_value(sweep::default_paper_csv()),
         "the paper's speed-up grid (CSV) shown beside a 320-unit one-layer speed-up grid; '' for none")
        ("paper-fig4-left", po::value<std::string>()->default_value(lm::default_paper_fig4_left_csv()),
         "the paper's training time per batch (CSV) shown beside `qrnn train-speed` results; '' for none")
        ("inference", po::value<std::string>(),
         "a results file with the inference grid (e.g. of paper_speed_grid.yaml) to show beside this file's training grids")
        ("grids-only", "print only the batch x sequence grids");
    po::positional_options_description positional;
    positional.add("file", -1);
    po::variables_map vm;
    if (!parse_options("usage: qrnn report results.h5 [options] | qrnn report train1.h5 [train2.h5 ...]", desc, args, vm,
                       &positional))
        return kExitOk;
    if (!vm.count("file")) fail("give a results file: qrnn report results.h5");
    const std::vector<std::string> paths = vm["file"].as<std::vector<std::string>>();
    if (std::all_of(paths.begin(), paths.end(), lm::is_step_timings)) {
        std::vector<std::pair<std::string, lm::StepTimings>> files;
        for (auto &p : paths) files.emplace_back(p, lm::read_step_timings(p));
        print_step_timings(files, vm["paper-fig4-left"].as<std::string>(), std::cout);
        return kExitOk;
    }
    if (std::all_of(paths.begin(), paths.end(), lm::is_train_results)) {
        print_training_results(paths, std::cout);
        return kExitOk;
    }
    if (std::all_of(paths.begin(), paths.end(), lm::is_seq_results)) {
        print_seq_results(paths, std::cout);
        return kExitOk;
    }
    if (paths.size() > 1)
        fail("several files are reported together only when all are results files of one kind: `qrnn train` (language model or sequence task) or `qrnn train-speed`");
    const std::string path = paths.front();
    ResultTable t = sweep::read_results(path);
    print_header(t, path);
    if (!vm.count("grids-only")) print_runs(t);
    const bool language_models = print_training_sweep(t, std::cout), tasks = print_seq_task_sweep(t, std::cout);
    if (language_models || tasks) return kExitOk;
    for (auto &g : sweep::time_grids(t)) print_grid(g, {}, 3);
    std::optional<sweep::Grid> paper;
    const std::string paper_path = vm["paper"].as<std::string>();
    auto speedups = sweep::speedup_grids(t);
    // Inference grids a training grid is shown beside: this file's, then those of --inference.
    std::vector<sweep::Grid> inference;
    for (auto &g : speedups)
        if (!g.training) inference.push_back(g);
    if (vm.count("inference"))
        for (auto &g : sweep::speedup_grids(sweep::read_results(vm["inference"].as<std::string>())))
            if (!g.training) inference.push_back(g);
    for (auto &g : speedups) {
        if (g.paper_shape && !paper && !paper_path.empty() && std::filesystem::exists(paper_path))
            paper = sweep::read_paper_grid(paper_path);
        Beside beside;
        if (g.training)
            for (auto &i : inference)
                if (i.pair == g.pair) {
                    beside.push_back({"inference", &i});
                    break;
                }
        if (g.paper_shape && paper) beside.push_back({"paper", &*paper});
        print_grid(g, beside, 2);
    }
    if (speedups.empty()) std::cout << "\n(no speed-up grid: the file has no QRNN run paired with a baseline model of the same sizes)\n";
    for (auto &w : sweep::width_tables(t)) print_width_table(w);
    return kExitOk;
}

const bool cmd_report_registered = register_command({"report", "print a sweep results file: runs, errors, batch x seq grids", report_command});
}  // namespace
}  // namespace qrnn::cli
