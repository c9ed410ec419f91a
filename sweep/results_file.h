// The HDF5 results file of a sweep: one table of runs, stored one 1-D dataset per column under /runs (all
// the same length; row i of every column is run i), plus file attributes describing the sweep and machine.
// Layout and an h5py snippet: docs/sweeps.md. Every write replaces the file atomically (a complete new file
// is written beside it, then renamed over it), so a process killed at any moment leaves the previous or
// the new complete file, never a torn one.
#pragma once
#include "runtime/writer_lock.h"
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "sweep/run_spec.h"

namespace qrnn::sweep {

enum class ColumnKind { Int, Float, Str };  // int64, float64, variable-length UTF-8 string
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();  // a float cell with no value

struct Column {
    std::string name;
    ColumnKind kind;
    std::vector<int64_t> ints;
    std::vector<double> floats;
    std::vector<std::string> strs;
    size_t size() const;
};

class ResultTable {
public:
    std::map<std::string, Value> attrs;  // file attributes

    size_t rows() const { return columns_.empty() ? 0 : columns_.front().size(); }
    const std::vector<Column> &columns() const { return columns_; }
    const Column *find(const std::string &name) const;
    void add_column(const std::string &name, ColumnKind kind);  // filled with defaults for existing rows
    // Appends a row; missing columns get defaults (0, NaN, ""), unknown names become new columns.
    void append(const std::map<std::string, Value> &row);
    std::map<std::string, Value> row(size_t i) const;
    void erase(size_t i);
    std::string str(size_t i, const std::string &column) const;  // "" if no such column
    double num(size_t i, const std::string &column) const;       // NaN if no such column
    int64_t index_of(const std::string &run_id) const;           // -1 if absent

private:
    std::vector<Column> columns_;
};

constexpr const char *kResultsFormat = "qrnn-sweep-results";

// The columns of a sweep's results, in order: run identity, every run field, knobs, outcome, provenance.
std::vector<std::pair<std::string, ColumnKind>> result_schema();

ResultTable read_results(const std::string &path);  // throws qrnn::Error if not a results file
void write_results(const std::string &path, const ResultTable &table);  // atomic replace

}  // namespace qrnn::sweep
