#include "sweep/speedup_grid.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "core/error.h"

namespace qrnn::sweep {
namespace {

const char *kQrnn = "qrnn";

const char *kTrainingSuffix = ", training step";

// Sizes shared by the two sides of a comparison, the precision (bf16 named; files before `precision` existed: f32)
// and the pass (files before `pass` existed: inference).
std::string context_of(const ResultTable &t, size_t i) {
    const std::string precision = t.str(i, "precision");
    return "n=" + t.str(i, "input") + " m=" + t.str(i, "hidden") + " L=" + t.str(i, "layers") + " " + t.str(i, "mode") +
           (precision.empty() || precision == "f32" ? "" : " " + precision) +
           (t.str(i, "pass") == "training" ? kTrainingSuffix : "");
}

bool is_training(const std::string &context) {
    const std::string suffix = kTrainingSuffix;
    return context.size() >= suffix.size() && context.compare(context.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A QRNN is told apart by its pooling, window, schedule and knobs; a baseline by its model name.
std::string variant_of(const ResultTable &t, size_t i) {
    if (t.str(i, "model") != kQrnn) return t.str(i, "model");
    std::string v = "qrnn " + t.str(i, "pooling") + " k=" + t.str(i, "window") + " schedule=" + t.str(i, "schedule");
    if (!t.str(i, "knobs").empty()) v += " knobs=" + t.str(i, "knobs");
    if (!t.str(i, "target").empty()) v += " target=" + t.str(i, "target");
    return v;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Cells {
    std::map<std::pair<int64_t, int64_t>, std::vector<double>> ms;
};

// context -> variant -> (batch, seq) -> median ms
std::map<std::string, std::map<std::string, std::map<std::pair<int64_t, int64_t>, double>>> collect(const ResultTable &t) {
    std::map<std::string, std::map<std::string, Cells>> raw;
    for (size_t i = 0; i < t.rows(); i++) {
        if (t.str(i, "status") != "ok") continue;
        auto key = std::make_pair(static_cast<int64_t>(t.num(i, "batch")), static_cast<int64_t>(t.num(i, "seq")));
        raw[context_of(t, i)][variant_of(t, i)].ms[key].push_back(t.num(i, "median_ms"));
    }
    std::map<std::string, std::map<std::string, std::map<std::pair<int64_t, int64_t>, double>>> out;
    for (auto &[context, variants] : raw)
        for (auto &[variant, cells] : variants)
            for (auto &[key, values] : cells.ms) out[context][variant][key] = median(values);
    return out;
}

Grid make_grid(std::string title, const std::string &context, std::map<std::pair<int64_t, int64_t>, double> cells) {
    Grid g;
    g.title = std::move(title);
    std::set<int64_t> b, s;
    for (auto &[key, v] : cells) {
        b.insert(key.first);
        s.insert(key.second);
    }
    g.batches.assign(b.begin(), b.end());
    g.seqs.assign(s.begin(), s.end());
    g.cells = std::move(cells);
    g.paper_shape = context.rfind("n=320 m=320 L=1 ", 0) == 0;
    g.training = is_training(context);
    return g;
}

}  // namespace

std::vector<Grid> time_grids(const ResultTable &table) {
    std::vector<Grid> grids;
    for (auto &[context, variants] : collect(table))
        for (auto &[variant, cells] : variants) {
            Grid g = make_grid("median ms of " + variant + ", " + context, context, cells);
            if (g.batches.size() > 1 && g.seqs.size() > 1) grids.push_back(std::move(g));
        }
    return grids;
}

std::vector<Grid> speedup_grids(const ResultTable &table) {
    std::vector<Grid> grids;
    for (auto &[context, variants] : collect(table))
        for (auto &[qrnn, q_cells] : variants) {
            if (qrnn.rfind("qrnn ", 0) != 0) continue;
            for (auto &[baseline, b_cells] : variants) {
                if (baseline.rfind("qrnn ", 0) == 0) continue;
                std::map<std::pair<int64_t, int64_t>, double> cells;
                for (auto &[key, q_ms] : q_cells) {
                    auto it = b_cells.find(key);
                    if (it != b_cells.end() && q_ms > 0) cells[key] = it->second / q_ms;
                }
                if (cells.empty()) continue;
                Grid g = make_grid("speed-up of " + qrnn + " over " + baseline + " (" + baseline + " ms / qrnn ms), " + context,
                                   context, cells);
                const std::string sizes = g.training ? context.substr(0, context.size() - std::string(kTrainingSuffix).size()) : context;
                g.pair = qrnn + " | " + baseline + " | " + sizes;
                grids.push_back(std::move(g));
            }
        }
    return grids;
}

namespace {

// (variant, "L=.. mode") -> width -> column -> median ms, over ok runs with input == hidden.
using ByWidth = std::map<std::pair<std::string, std::string>, std::map<int64_t, std::map<std::string, double>>>;

ByWidth collect_by_width(const ResultTable &t) {
    std::map<std::pair<std::string, std::string>, std::map<int64_t, std::map<std::string, std::vector<double>>>> raw;
    for (size_t i = 0; i < t.rows(); i++) {
        if (t.str(i, "status") != "ok" || t.str(i, "input") != t.str(i, "hidden")) continue;
        const std::string pass = t.str(i, "pass") == "training" ? "training" : "inference";
        char column[96];
        std::snprintf(column, sizeof column, "%s B=%lld T=%lld", pass.c_str(), (long long)t.num(i, "batch"),
                      (long long)t.num(i, "seq"));
        raw[{variant_of(t, i), "L=" + t.str(i, "layers") + " " + t.str(i, "mode")}][static_cast<int64_t>(t.num(i, "hidden"))]
           [column]
               .push_back(t.num(i, "median_ms"));
    }
    ByWidth out;
    for (auto &[key, widths] : raw)
        for (auto &[w, columns] : widths)
            for (auto &[column, ms] : columns) out[key][w][column] = median(ms);
    return out;
}

}  // namespace

std::vector<WidthTable> width_tables(const ResultTable &table) {
    const ByWidth by = collect_by_width(table);
    std::vector<WidthTable> tables;
    for (auto &[qkey, q] : by) {
        if (qkey.first.rfind("qrnn ", 0) != 0) continue;
        for (auto &[bkey, b] : by) {
            if (bkey.first.rfind("qrnn ", 0) == 0 || bkey.second != qkey.second) continue;
            WidthTable t;
            t.title = "speed-up of " + qkey.first + " over " + bkey.first + " (" + bkey.first + " ms / qrnn ms) by width, " +
                      qkey.second;
            std::set<std::string> columns;
            for (auto &[w, q_cols] : q) {
                auto bw = b.find(w);
                if (bw == b.end()) continue;
                for (auto &[column, q_ms] : q_cols) {
                    auto bc = bw->second.find(column);
                    if (bc == bw->second.end() || q_ms <= 0) continue;
                    t.cells[{w, column}] = bc->second / q_ms;
                    columns.insert(column);
                    if (t.widths.empty() || t.widths.back() != w) t.widths.push_back(w);
                }
            }
            t.columns.assign(columns.begin(), columns.end());
            if (t.widths.size() > 1) tables.push_back(std::move(t));
        }
    }
    return tables;
}

Grid read_paper_grid(const std::string &csv_path) {
    std::ifstream in(csv_path);
    if (!in) fail(csv_path, ": cannot read the paper's grid");
    std::string line;
    std::vector<int64_t> seqs;
    Grid g;
    g.title = "paper (Bradbury et al. 2016, Fig. 4 right; GPU, cuDNN LSTM)";
    g.paper_shape = true;
    int line_no = 0;
    auto cells_of = [&](const std::string &text) {
        std::vector<std::string> out;
        std::stringstream ss(text);
        std::string cell;
        while (std::getline(ss, cell, ',')) out.push_back(cell);
        return out;
    };
    try {
        while (std::getline(in, line)) {
            line_no++;
            if (line.empty() || line[0] == '#') continue;
            std::vector<std::string> cells = cells_of(line);
            if (seqs.empty()) {
                for (size_t i = 1; i < cells.size(); i++) seqs.push_back(std::stoll(cells[i]));
                continue;
            }
            if (cells.size() != seqs.size() + 1) fail(csv_path, ":", line_no, ": expected ", seqs.size() + 1, " cells");
            int64_t batch = std::stoll(cells[0]);
            g.batches.push_back(batch);
            for (size_t i = 0; i < seqs.size(); i++) g.cells[{batch, seqs[i]}] = std::stod(cells[i + 1]);
        }
    } catch (const std::logic_error &) {
        fail(csv_path, ":", line_no, ": not a number");
    }
    g.seqs = seqs;
    return g;
}

std::string default_paper_csv() { return std::string(QRNN_SWEEP_REPO_DIR) + "/experiments/paper/fig4_right_speedup.csv"; }

}  // namespace qrnn::sweep
