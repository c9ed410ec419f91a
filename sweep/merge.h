// Joining results files (shards of one sweep, or several sweeps): rows keyed by run id.
#pragma once
#include <string>
#include <vector>

#include "sweep/results_file.h"

namespace qrnn::sweep {

struct MergeSummary {
    int64_t rows = 0, duplicates = 0;
    bool same_sweep = true;  // every input has the same sweep_yaml
};

// Rows in input order; a run id seen before is dropped, unless the earlier row's status is not ok and this
// one's is (then it replaces it). File attributes come from the first input, plus "merged_from".
ResultTable merge_results(const std::vector<std::string> &paths, MergeSummary &summary);

}  // namespace qrnn::sweep
