#include "schedules/tuning_db.h"

#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <limits>
#include <sstream>

#include "core/error.h"
#include "schedules/cpu_target.h"
#include "schedules/gemm_tuning.h"

namespace qrnn {

std::string default_tuning_db_path() {
    const char *env = std::getenv("QRNN_TUNING_DB");
    return env && *env ? env : "qrnn_tuning.jsonl";
}

std::string tuning_target_name(const Halide::Target &target) {
    return target.without_feature(Halide::Target::JIT).to_string();
}

std::string tuning_cpu_name() { return cpu_info().model + " (" + cpu_info().id + ")"; }

static std::string quoted(const std::string &s) {
    std::string out = "\"";
    for (char ch : s) {
        if (ch == '"' || ch == '\\') out += '\\';
        if (static_cast<unsigned char>(ch) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", ch);
            out += buf;
            continue;
        }
        out += ch;
    }
    return out + "\"";
}

std::string to_json_line(const TuningRecord &r) {
    std::ostringstream os;
    os << std::setprecision(6);
    os << "{\"version\":1,\"time\":" << quoted(r.time) << ",\"cpu\":" << quoted(r.cpu) << ",\"pooling\":" << quoted(r.pooling)
       << ",\"target\":" << quoted(r.target) << ",\"shape\":{\"T\":" << r.shape.T << ",\"B\":" << r.shape.B
       << ",\"n\":" << r.shape.n << ",\"m\":" << r.shape.m << ",\"k\":" << r.shape.k << "},\"schedule\":" << quoted(r.schedule)
       << ",\"knobs\":{";
    bool first = true;
    for (auto &[name, value] : r.knobs) {
        os << (first ? "" : ",") << quoted(name) << ":" << value;
        first = false;
    }
    os << "},\"status\":" << quoted(r.status) << ",\"median_ms\":" << r.median_ms << ",\"min_ms\":" << r.min_ms
       << ",\"repeats\":" << r.repeats << ",\"rel_error\":" << r.rel_error;
    if (r.score > 0) os << ",\"score\":" << r.score;
    os << ",\"error\":" << quoted(r.error) << "}";
    return os.str();
}

void append_tuning_record(const std::string &path, const TuningRecord &record) {
    std::ofstream f(path, std::ios::app);
    if (!f) fail("tuning database ", path, ": cannot open for appending");
    f << to_json_line(record) << "\n";
    f.flush();
    if (!f) fail("tuning database ", path, ": write failed");
}

TuningRecord parse_tuning_line(const std::string &line) {
    try {
        boost::property_tree::ptree tree;
        std::istringstream is(line);
        boost::property_tree::read_json(is, tree);
        TuningRecord r;
        r.time = tree.get<std::string>("time", "");
        r.cpu = tree.get<std::string>("cpu", "");
        r.pooling = tree.get<std::string>("pooling");
        r.target = tree.get<std::string>("target");
        r.schedule = tree.get<std::string>("schedule");
        r.status = tree.get<std::string>("status");
        r.error = tree.get<std::string>("error", "");
        r.shape = {tree.get<int64_t>("shape.T"), tree.get<int64_t>("shape.B"), tree.get<int64_t>("shape.n"),
                   tree.get<int64_t>("shape.m"), tree.get<int64_t>("shape.k")};
        for (auto &kv : tree.get_child("knobs")) r.knobs[kv.first] = knob_value(kv.first, kv.second.get_value<int64_t>());
        r.median_ms = tree.get<double>("median_ms");
        r.min_ms = tree.get<double>("min_ms", 0);
        r.repeats = tree.get<int>("repeats", 0);
        r.rel_error = tree.get<double>("rel_error", 0);
        r.score = tree.get<double>("score", 0);
        return r;
    } catch (const Error &) {
        throw;
    } catch (const std::exception &e) {
        fail("malformed record (", e.what(), ")");
    }
}

namespace {
// Calls use(record) for every non-blank line that contains `must_contain`; a malformed one goes to bad(line number,
// message). The other lines are not parsed.
template <class Use, class Bad>
void for_each_tuning_line(const std::string &path, Use use, Bad bad, const std::string &must_contain = "") {
    std::ifstream f(path);
    std::string line;
    for (int number = 1; f && std::getline(f, line); number++) {
        if (line.find_first_not_of(" \t\r") == std::string::npos || line.find(must_contain) == std::string::npos) continue;
        try {
            TuningRecord r = parse_tuning_line(line);
            r.line = number;
            use(std::move(r));
        } catch (const Error &e) {
            bad(number, e.what());
        }
    }
}
}  // namespace

std::vector<TuningRecord> read_tuning_records(const std::string &path, const std::string &schedule) {
    std::vector<TuningRecord> records;
    for_each_tuning_line(
        path,
        [&](TuningRecord r) {
            if (schedule.empty() || r.schedule == schedule) records.push_back(std::move(r));
        },
        [&](int number, const std::string &why) { fail("tuning database ", path, " line ", number, ": ", why); },
        schedule.empty() ? "" : "\"" + schedule + "\"");
    return records;
}

std::string tuning_record_problem(const TuningRecord &r) {
    if (r.shape.T < 1 || r.shape.B < 1 || r.shape.n < 1 || r.shape.m < 1 || r.shape.k < 1)
        return "shape " + r.shape.key() + " has a dimension < 1";
    if (!(r.median_ms >= 0) || !std::isfinite(r.median_ms)) return "median_ms is not a finite time";
    if (r.schedule == kGemmCoreSchedule) {
        try {
            gemm_core_knobs_from(r.knobs, Halide::Target(r.target));
        } catch (const std::exception &e) {
            return e.what();
        }
        return "";
    }
    try {
        const LayerSchedule &s = find_layer_schedule(r.schedule);
        if (s.name == "tuned-db") return "schedule 'tuned-db' would use the database recursively";
        merge_knobs(s, r.knobs);
    } catch (const Error &e) {
        return e.what();
    }
    return "";
}

std::vector<TuningRecord> read_usable_tuning_records(const std::string &path, std::ostream &warnings) {
    std::vector<TuningRecord> records;
    auto skip = [&](int number, const std::string &why) {
        warnings << "warning: tuning database " << path << " line " << number << " skipped: " << why << "\n";
    };
    for_each_tuning_line(
        path,
        [&](TuningRecord r) {
            std::string why = r.status == "ok" ? tuning_record_problem(r) : "";
            if (why.empty()) records.push_back(std::move(r));
            else skip(r.line, why);
        },
        skip);
    return records;
}

std::optional<TuningRecord> best_tuning_record(const std::vector<TuningRecord> &records, const std::string &pooling,
                                               const std::string &target, const LayerShape &shape,
                                               const std::string &cpu) {
    auto distance = [&](const LayerShape &s) {
        auto d = [](int64_t a, int64_t b) { return std::abs(std::log(static_cast<double>(a) / static_cast<double>(b))); };
        return d(s.T, shape.T) + d(s.B, shape.B) + d(s.n, shape.n) + d(s.m, shape.m) + d(s.k, shape.k);
    };
    std::optional<TuningRecord> best;
    double best_distance = std::numeric_limits<double>::infinity();
    for (auto &r : records) {
        if (r.status != "ok" || r.schedule == kGemmCoreSchedule || r.pooling != pooling || r.target != target || r.cpu != cpu) continue;
        if (r.shape.T < 1 || r.shape.B < 1 || r.shape.n < 1 || r.shape.m < 1 || r.shape.k < 1) continue;
        double dist = distance(r.shape);
        if (dist < best_distance - 1e-12 || (dist <= best_distance + 1e-12 && best && r.median_ms < best->median_ms)) {
            best = r;
            best_distance = dist;
        }
    }
    return best;
}

}  // namespace qrnn
