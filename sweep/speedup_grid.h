// Batch x sequence grids from a results table, in the paper's layout (rows batch, columns sequence
// length): median time per model, and the speed-up of each QRNN variant over each baseline model
// (baseline median ms / QRNN median ms) measured in the same file with the same sizes.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sweep/results_file.h"

namespace qrnn::sweep {

struct Grid {
    std::string title;
    std::vector<int64_t> batches, seqs;  // sorted
    std::map<std::pair<int64_t, int64_t>, double> cells;  // (batch, seq) -> value
    // The paper's setup (one layer, 320 units in and out): show the published grid beside it.
    bool paper_shape = false;
    bool training = false;  // runs of `pass: training` (a training step each)
    // Speed-up grids: "QRNN variant | baseline | sizes" without the pass, to find the inference grid of a
    // training grid (and the reverse).
    std::string pair;
};

// Over runs with status ok; replicates and repeated entries are combined by their median.
std::vector<Grid> time_grids(const ResultTable &table);     // per model variant, for batch x seq sweeps only
std::vector<Grid> speedup_grids(const ResultTable &table);  // per (QRNN variant, baseline) pair

// Speed-ups by layer width (runs with input == hidden): rows width, columns "B=.. T=.. pass", one table per
// (QRNN variant, baseline, layers, mode) measured at two widths or more (experiments/lm_widths.yaml).
struct WidthTable {
    std::string title;
    std::vector<int64_t> widths;         // sorted
    std::vector<std::string> columns;    // sorted by pass, batch, seq
    std::map<std::pair<int64_t, std::string>, double> cells;  // (width, column) -> speed-up
};
std::vector<WidthTable> width_tables(const ResultTable &table);

// The paper's Figure 4 (right) grid from its CSV (experiments/paper/fig4_right_speedup.csv).
Grid read_paper_grid(const std::string &csv_path);
std::string default_paper_csv();  // the copy in this source tree

}  // namespace qrnn::sweep
