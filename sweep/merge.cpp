#include "runtime/timing.h"
#include "sweep/merge.h"

#include "core/error.h"
#include "runtime/machine_info.h"

namespace qrnn::sweep {

ResultTable merge_results(const std::vector<std::string> &paths, MergeSummary &summary) {
    if (paths.empty()) fail("merge: give at least one input file");
    ResultTable out;
    for (auto &[name, kind] : result_schema()) out.add_column(name, kind);
    std::string sources;
    for (size_t f = 0; f < paths.size(); f++) {
        ResultTable in = read_results(paths[f]);
        if (f == 0) out.attrs = in.attrs;
        else if (value_str(in.attrs["sweep_yaml"]) != value_str(out.attrs["sweep_yaml"])) summary.same_sweep = false;
        sources += (sources.empty() ? "" : ",") + paths[f];
        for (size_t i = 0; i < in.rows(); i++) {
            int64_t at = out.index_of(in.str(i, "run_id"));
            if (at >= 0) {
                summary.duplicates++;
                if (out.str(at, "status") == "ok" || in.str(i, "status") != "ok") continue;
                out.erase(static_cast<size_t>(at));
            }
            out.append(in.row(i));
        }
    }
    out.attrs["merged_from"] = sources;
    out.attrs["updated_utc"] = utc_now_iso();
    summary.rows = static_cast<int64_t>(out.rows());
    return out;
}

}  // namespace qrnn::sweep
