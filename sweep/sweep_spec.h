// A sweep file (YAML, format in docs/sweeps.md) parsed, validated and expanded into runs. Every error is
// one line "FILE:LINE:COL: key 'KEY': what is wrong", thrown as qrnn::Error before anything runs.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "sweep/run_spec.h"

namespace qrnn::sweep {

struct PlannedRun {
    int64_t index = 0;  // position in the expansion
    int64_t group = 0;  // index of the first run of its interleave group (= index without `interleave`); shards slice on it
    std::string id;     // run_id(spec)
    RunSpec spec;
    std::vector<std::pair<std::string, std::string>> varied;  // grid/zip keys (and replicate) with values
};

struct Sweep {
    std::string path, name, description, yaml_text;
    int64_t replicates = 1;                // top-level `repeats`
    std::vector<std::string> interleave;   // runs differing only in these keys are measured side by side
    std::vector<std::string> varied_keys;  // grid and zip keys in file order
    std::vector<PlannedRun> runs;          // in expansion order: first grid key outermost, replicate innermost
};

struct LoadOptions {
    // false: model names are not checked (for a dry run of a sweep naming models this build lacks); such
    // runs fail when run and are recorded as failed. Everything else is still validated.
    bool check_models = true;
};

Sweep load_sweep(const std::string &path, const LoadOptions &opts = {});
Sweep parse_sweep(const std::string &yaml_text, const std::string &path, const LoadOptions &opts = {});

}  // namespace qrnn::sweep
