// The tuning database: every autotuning trial, one JSON object per line (JSON lines), appended and flushed
// as it is measured so nothing is lost on Ctrl-C or a crash. Format (docs/schedules.md):
//   {"version":1,"time":"YYYY-MM-DDThh:mm:ssZ","cpu":"AMD EPYC (AuthenticAMD 26/2/1)","pooling":"fo","target":"x86-64-linux-avx512...",
//    "shape":{"T":128,"B":16,"n":320,"m":320,"k":2},"schedule":"tuned","knobs":{"tile_t":8,...},
//    "status":"ok","median_ms":4.21,"min_ms":4.1,"repeats":5,"rel_error":1.3e-06,"error":""}
// Records of schedule "gemm-core" (schedules/gemm_tuning.h, `qrnn autotune --gemm`) hold the GEMM core's knobs and
// a "score": the geometric mean of its GEMMs' speed over the best sgemm's, measured side by side.
// status: "ok" (measured and verified), "wrong" (rel_error above the tolerance), "failed" (compile/run
// error, message in "error"). Only "ok" records of this CPU model and target are used: a tuning is per machine.
#pragma once
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "schedules/schedule.h"

namespace qrnn {

struct TuningRecord {
    std::string time, cpu, pooling, target, schedule, status, error;  // cpu: tuning_cpu_name() of the machine
    LayerShape shape;
    Knobs knobs;
    double median_ms = 0, min_ms = 0, rel_error = 0;
    double score = 0;  // gemm-core records (written when > 0)
    int repeats = 0;
    int line = 0;  // line in the file it was read from
};

std::string default_tuning_db_path();  // $QRNN_TUNING_DB, else ./qrnn_tuning.jsonl
std::string tuning_target_name(const Halide::Target &target);  // target string without "jit"
std::string tuning_cpu_name();  // this CPU: model name and vendor family/model/stepping

std::string to_json_line(const TuningRecord &record);
void append_tuning_record(const std::string &path, const TuningRecord &record);  // throws if not writable
// One JSON line as a record; throws qrnn::Error (without file and line) if malformed.
TuningRecord parse_tuning_line(const std::string &line);
// All records of a file (none if it does not exist), or only those of `schedule` (lines not naming it are not parsed:
// the GEMM core reads its records at every start-up); a malformed line read is an error naming file and line.
std::vector<TuningRecord> read_tuning_records(const std::string &path, const std::string &schedule = "");
// Why tuned-db cannot use a record ("" if it can): an unknown schedule, tuned-db itself (recursion), a
// knob the schedule lacks or outside its range, a shape dimension < 1.
std::string tuning_record_problem(const TuningRecord &record);
// The records tuned-db may use: malformed and unusable lines are skipped with a one-line warning each
// ("warning: tuning database F line N skipped: why") on `warnings`.
std::vector<TuningRecord> read_usable_tuning_records(const std::string &path, std::ostream &warnings);

// The fastest "ok" layer-schedule record (not gemm-core) for (pooling, target, cpu) at the shape nearest to `shape` (log-distance over
// T, B, n, m, k); none if there is no such record.
std::optional<TuningRecord> best_tuning_record(const std::vector<TuningRecord> &records, const std::string &pooling,
                                               const std::string &target, const LayerShape &shape,
                                               const std::string &cpu = tuning_cpu_name());

}  // namespace qrnn
