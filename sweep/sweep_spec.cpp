#include "sweep/sweep_spec.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "core/error.h"
#include "runtime/yaml_documents.h"
#include "plugins/model.h"
#include "sweep/train_run.h"

namespace qrnn::sweep {
namespace {

struct Located {
    Value value;
    YAML::Mark mark;
};
using Assignment = std::vector<std::pair<std::string, Located>>;  // keys set together
struct Factor {
    YAML::Mark mark;
    std::vector<Assignment> choices;  // one is taken per run
};
struct Exclusion {
    YAML::Mark mark;
    std::vector<std::pair<std::string, std::vector<Value>>> keys;  // every key must match one of its values
    int64_t matched = 0;
};

const char *kind_name(FieldKind k) {
    switch (k) {
        case FieldKind::Int: return "an integer";
        case FieldKind::Float: return "a number";
        case FieldKind::Bool: return "true or false";
        default: return "a string";
    }
}

const char *node_kind(const YAML::Node &n) {
    if (n.IsSequence()) return "a list";
    if (n.IsMap()) return "a map";
    if (n.IsNull()) return "nothing";
    return "a scalar";
}

class Parser {
public:
    static constexpr int64_t kMaxRuns = 100000;  // before exclusions; more is surely a typo (and memory)

    Parser(std::string path, LoadOptions opts) : path_(std::move(path)), opts_(opts) {}

    Sweep parse(const std::string &text) {
        YAML::Node root;
        std::optional<YAML::Mark> second;
        try {
            root = YAML::Load(text);
            if (root.IsMap()) second = second_yaml_document(text);
        } catch (const YAML::ParserException &e) {
            fail_at(e.mark, "", "YAML syntax error: " + e.msg);
        }
        if (!root.IsMap()) fail_at(root.Mark(), "", "a sweep file is a map (keys: name, description, base, grid, zip, exclude, repeats, seed, interleave)");
        if (second) fail_at(*second, "", "a second YAML document: a sweep file holds exactly one (remove the '---')");
        Sweep sweep;
        sweep.path = path_;
        sweep.yaml_text = text;
        std::map<std::string, YAML::Node> top = entries(root, "", {"name", "description", "base", "grid", "zip", "exclude", "repeats", "seed", "interleave"});
        if (!top.count("name")) fail_at(root.Mark(), "name", "missing: every sweep needs a name");
        sweep.name = string_of(top["name"], "name");
        if (top.count("description")) sweep.description = string_of(top["description"], "description");
        if (top.count("base")) parse_base(top["base"]);
        if (top.count("seed")) {
            if (base_keys_.count("seed")) fail_at(top["seed"].Mark(), "seed", "given both at top level and in base");
            set_checked(base_, "seed", top["seed"], "seed");
        }
        if (top.count("repeats")) {
            sweep.replicates = std::get<int64_t>(convert(top["repeats"], FieldKind::Int, "repeats"));
            if (sweep.replicates < 1) fail_at(top["repeats"].Mark(), "repeats", "must be >= 1");
        }
        if (top.count("grid")) parse_grid(top["grid"]);
        if (top.count("zip")) parse_zip(top["zip"]);
        if (top.count("exclude")) parse_exclude(top["exclude"]);
        if (top.count("interleave")) parse_interleave(top["interleave"], sweep);
        expand(sweep, top.count("grid") ? top["grid"].Mark() : root.Mark());
        return sweep;
    }

private:
    [[noreturn]] void fail_at(const YAML::Mark &m, const std::string &key, const std::string &msg) const {
        std::ostringstream os;
        os << path_;
        if (m.line >= 0) os << ":" << m.line + 1 << ":" << m.column + 1;
        os << ": ";
        if (!key.empty()) os << "key '" << key << "': ";
        os << msg;
        throw Error(os.str());
    }

    // The entries of a map, keyed by name; rejects non-maps, duplicate keys, and keys outside `known` (if given).
    std::map<std::string, YAML::Node> entries(const YAML::Node &map, const std::string &where,
                                              const std::vector<std::string> &known) const {
        if (!map.IsMap()) fail_at(map.Mark(), where, std::string("expected a map, got ") + node_kind(map));
        std::map<std::string, YAML::Node> out;
        for (auto it = map.begin(); it != map.end(); ++it) {
            if (!it->first.IsScalar()) fail_at(it->first.Mark(), where, "keys must be names");
            std::string key = it->first.Scalar();
            std::string full = where.empty() ? key : where + "." + key;
            if (!known.empty() && std::find(known.begin(), known.end(), key) == known.end()) {
                std::string list;
                for (auto &k : known) list += (list.empty() ? "" : ", ") + k;
                fail_at(it->first.Mark(), full, "unknown key (known: " + list + ")");
            }
            if (out.count(key)) fail_at(it->first.Mark(), full, "duplicate key");
            out[key] = it->second;
        }
        return out;
    }

    // Ordered entries (file order) of a map of run keys, each checked to be a known key.
    std::vector<std::pair<std::string, YAML::Node>> run_entries(const YAML::Node &map, const std::string &where) const {
        if (!map.IsMap()) fail_at(map.Mark(), where, std::string("expected a map of run keys, got ") + node_kind(map));
        std::vector<std::pair<std::string, YAML::Node>> out;
        std::set<std::string> seen;
        for (auto it = map.begin(); it != map.end(); ++it) {
            std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
            try {
                key_kind(key);
            } catch (const Error &e) {
                fail_at(it->first.Mark(), where + "." + key, std::string("unknown key (known: ") + known_field_names() + ")");
            }
            if (!seen.insert(key).second) fail_at(it->first.Mark(), where + "." + key, "duplicate key");
            out.emplace_back(key, it->second);
            key_marks_[key + "@" + where] = it->first.Mark();
        }
        return out;
    }

    std::string string_of(const YAML::Node &n, const std::string &key) const {
        Value v = convert(n, FieldKind::Str, key);
        return std::get<std::string>(v);
    }

    Value convert(const YAML::Node &n, FieldKind kind, const std::string &key) const {
        if (!n.IsScalar()) fail_at(n.Mark(), key, std::string("expected ") + kind_name(kind) + ", got " + node_kind(n));
        const std::string &s = n.Scalar();
        const std::string got = std::string("expected ") + kind_name(kind) + ", got '" + s + "'";
        if (kind == FieldKind::Str) {
            if (s.empty()) fail_at(n.Mark(), key, "expected a non-empty string");
            return s;
        }
        if (kind == FieldKind::Bool) {
            bool b = false;
            if (!YAML::convert<bool>::decode(n, b)) fail_at(n.Mark(), key, got);
            return int64_t(b);
        }
        char *end = nullptr;
        errno = 0;
        if (kind == FieldKind::Int) {
            long long v = std::strtoll(s.c_str(), &end, 10);
            if (s.empty() || *end != '\0' || errno == ERANGE) fail_at(n.Mark(), key, got);
            return int64_t(v);
        }
        double v = std::strtod(s.c_str(), &end);
        if (s.empty() || *end != '\0' || errno == ERANGE) fail_at(n.Mark(), key, got);
        return v;
    }

    // Converts one value of a run key and checks it on its own (ModelConfig::validate, registries).
    Located checked(const YAML::Node &n, const std::string &key, const std::string &where) const {
        Located loc{convert(n, key_kind(key), where), n.Mark()};
        RunSpec probe;  // smallest sizes, so that only the value itself is judged (combinations: check_run)
        probe.config.batch = probe.config.seq = probe.config.input = probe.config.hidden = 1;
        try {
            set_key(probe, key, loc.value);
            if (find_run_field(key) && (key != "model" || opts_.check_models)) {
                if (key != "model") probe.config.model = ModelConfig().model;
                validate_model_config(probe.config);
            }
            if (key == "schedule") find_layer_schedule(probe.config.schedule);
            if (key == "target" && !Halide::Target::validate_target_string(probe.config.target))
                fail("invalid Halide target '", probe.config.target, "' (e.g. host, host-avx512, host-cuda-cuda_capability_80)");
        } catch (const Error &e) {
            std::string msg = e.what();
            std::string cli_prefix = "--" + key + " ";
            if (msg.rfind(cli_prefix, 0) == 0) msg = msg.substr(cli_prefix.size());
            fail_at(n.Mark(), where, msg);
        }
        return loc;
    }

    void set_checked(RunSpec &spec, const std::string &key, const YAML::Node &n, const std::string &where) {
        set_key(spec, key, checked(n, key, where).value);
    }

    void parse_base(const YAML::Node &base) {
        for (auto &[key, node] : run_entries(base, "base")) {
            set_checked(base_, key, node, "base." + key);
            base_keys_.insert(key);
            base_marks_.emplace_back(key, node.Mark());
        }
    }

    void claim(const std::string &key, const YAML::Mark &mark, const std::string &where) {
        if (!varied_.insert(key).second) fail_at(mark, where, "varied twice (a key may appear once across grid and zip)");
        varied_order_.push_back(key);
    }

    std::vector<Located> list_of(const YAML::Node &n, const std::string &key, const std::string &where) const {
        if (!n.IsSequence()) fail_at(n.Mark(), where, std::string("expected a list of values, got ") + node_kind(n));
        if (n.size() == 0) fail_at(n.Mark(), where, "empty list: nothing to run");
        std::vector<Located> values;
        for (auto item : n) values.push_back(checked(item, key, where));
        return values;
    }

    void parse_grid(const YAML::Node &grid) {
        auto items = run_entries(grid, "grid");
        if (items.empty()) fail_at(grid.Mark(), "grid", "empty grid: give at least one key with a list of values");
        for (auto &[key, node] : items) {
            const std::string where = "grid." + key;
            claim(key, key_marks_[key + "@grid"], where);
            Factor f{node.Mark(), {}};
            for (auto &v : list_of(node, key, where)) f.choices.push_back({{key, v}});
            factors_.push_back(std::move(f));
        }
    }

    void parse_zip(const YAML::Node &zip) {
        std::vector<YAML::Node> groups;
        if (zip.IsSequence()) {
            if (zip.size() == 0) fail_at(zip.Mark(), "zip", "empty list of zip groups");
            for (auto g : zip) groups.push_back(g);
        } else {
            groups.push_back(zip);
        }
        for (size_t gi = 0; gi < groups.size(); gi++) {
            const std::string where = groups.size() > 1 ? "zip[" + std::to_string(gi) + "]" : "zip";
            auto items = run_entries(groups[gi], where);
            if (items.empty()) fail_at(groups[gi].Mark(), where, "empty zip group");
            Factor f{groups[gi].Mark(), {}};
            std::string first_key;
            for (auto &[key, node] : items) {
                const std::string key_where = where + "." + key;
                claim(key, key_marks_[key + "@" + where], key_where);
                std::vector<Located> values = list_of(node, key, key_where);
                if (first_key.empty()) {
                    first_key = key;
                    f.choices.resize(values.size());
                } else if (values.size() != f.choices.size()) {
                    fail_at(node.Mark(), key_where,
                            "zip lists differ in length: " + first_key + " has " + std::to_string(f.choices.size()) +
                                " values, " + key + " has " + std::to_string(values.size()));
                }
                for (size_t i = 0; i < values.size(); i++) f.choices[i].emplace_back(key, values[i]);
            }
            factors_.push_back(std::move(f));
        }
    }

    // `interleave: model` or a list of keys: each must be varied, and not a measurement setting or knob
    // (side-by-side runs share warm-up, repeats, verification and knobs).
    void parse_interleave(const YAML::Node &node, Sweep &sweep) {
        std::vector<YAML::Node> items;
        if (node.IsSequence()) {
            for (auto item : node) items.push_back(item);
            if (items.empty()) fail_at(node.Mark(), "interleave", "empty list");
        } else {
            items.push_back(node);
        }
        for (auto &item : items) {
            std::string key = string_of(item, "interleave");
            const RunField *field = find_run_field(key);
            if (!field || is_measurement_key(key))
                fail_at(item.Mark(), "interleave", "'" + key + "' cannot be interleaved (give model config keys, e.g. model)");
            if (!varied_.count(key)) fail_at(item.Mark(), "interleave", "'" + key + "' is not varied by grid or zip");
            if (std::find(sweep.interleave.begin(), sweep.interleave.end(), key) != sweep.interleave.end())
                fail_at(item.Mark(), "interleave", "'" + key + "' listed twice");
            sweep.interleave.push_back(key);
        }
    }

    void parse_exclude(const YAML::Node &exclude) {
        if (!exclude.IsSequence()) fail_at(exclude.Mark(), "exclude", std::string("expected a list of maps, got ") + node_kind(exclude));
        for (size_t i = 0; i < exclude.size(); i++) {
            const std::string where = "exclude[" + std::to_string(i) + "]";
            Exclusion ex{exclude[i].Mark(), {}, 0};
            auto items = run_entries(exclude[i], where);
            if (items.empty()) fail_at(exclude[i].Mark(), where, "empty exclusion would skip every run");
            for (auto &[key, node] : items) {
                std::vector<Value> values;
                if (node.IsSequence()) {
                    for (auto &v : list_of(node, key, where + "." + key)) values.push_back(v.value);
                } else {
                    values.push_back(checked(node, key, where + "." + key).value);
                }
                ex.keys.emplace_back(key, std::move(values));
            }
            exclusions_.push_back(std::move(ex));
        }
    }

    static std::string current(const RunSpec &spec, const std::string &key) {
        if (is_knob_key(key)) {
            auto it = spec.knobs.find(key.substr(std::string(kKnobPrefix).size()));
            return it == spec.knobs.end() ? "" : std::to_string(it->second);
        }
        if (is_train_key(key)) {
            auto it = spec.train.find(key.substr(std::string(kTrainPrefix).size()));
            return it == spec.train.end() ? "" : it->second;
        }
        return value_str(find_run_field(key)->get(spec));
    }

    bool excluded(const RunSpec &spec) {
        bool any = false;
        for (auto &ex : exclusions_) {
            bool all = true;
            for (auto &[key, values] : ex.keys) {
                bool one = false;
                RunSpec probe;
                for (auto &v : values) {
                    set_key(probe, key, v);  // normalises (e.g. mode) before comparing
                    one = one || current(probe, key) == current(spec, key);
                }
                all = all && one;
            }
            if (all) ex.matched++;
            any = any || all;
        }
        return any;
    }

    // Checks a whole run (the keys together). The error points at the line of the key it names, if any.
    void check_run(const RunSpec &spec, const std::string &what, const std::vector<std::pair<std::string, YAML::Mark>> &marks,
                   const YAML::Mark &fallback) const {
        try {
            ModelConfig cfg = spec.config;
            if (!opts_.check_models) cfg.model = ModelConfig().model;
            validate_model_config(cfg);
            if (opts_.check_models && is_training_run(spec)) validate_training_run(spec);
            const LayerSchedule &schedule = find_layer_schedule(spec.config.schedule);
            merge_knobs(schedule, spec.knobs);
            const bool gpu_target = !cfg.target.empty() && Halide::Target(cfg.target).has_gpu_feature();
            if (cfg.model == "qrnn" && gpu_target != (schedule.target_family == "gpu"))
                fail("schedule '", schedule.name, "' is for ", schedule.target_family, " targets, not target '",
                     cfg.target.empty() ? "host" : cfg.target, "'");
        } catch (const Error &e) {
            const std::string msg = e.what();
            // The key the message names ("key 'lr'" first, then any mention), else the run's own line.
            for (bool named : {true, false})
                for (auto &[key, mark] : marks) {
                    const std::string name = is_knob_key(key)    ? key.substr(std::string(kKnobPrefix).size())
                                             : is_train_key(key) ? key.substr(std::string(kTrainPrefix).size())
                                                                 : key;
                    if (msg.find(named ? "key '" + name + "'" : name) != std::string::npos) fail_at(mark, key, what + ": " + msg);
                }
            fail_at(fallback, "", what + ": " + msg);
        }
    }

    void expand(Sweep &sweep, const YAML::Mark &mark) {
        sweep.varied_keys = varied_order_;
        double planned = static_cast<double>(sweep.replicates);
        for (auto &factor : factors_) planned *= static_cast<double>(factor.choices.size());
        if (planned > kMaxRuns)
            fail_at(mark, "", "the sweep expands to " + value_str(planned) + " runs (grid x zip x repeats), more than " +
                                  std::to_string(kMaxRuns) + "; split it into several sweep files");
        std::vector<size_t> pick(factors_.size(), 0);
        std::set<std::string> ids;
        while (true) {
            RunSpec spec = base_;
            std::vector<std::pair<std::string, std::string>> varied;
            std::vector<std::pair<std::string, YAML::Mark>> marks;
            for (size_t f = 0; f < factors_.size(); f++)
                for (auto &[key, loc] : factors_[f].choices[pick[f]]) {
                    set_key(spec, key, loc.value);
                    varied.emplace_back(key, value_str(loc.value));
                    marks.emplace_back(key, loc.mark);
                }
            marks.insert(marks.end(), base_marks_.begin(), base_marks_.end());
            if (!excluded(spec)) {
                std::string what = varied.empty() ? "base" : "run";
                for (auto &[k, v] : varied) what += " " + k + "=" + v;
                check_run(spec, what, marks, mark);
                const uint32_t seed = spec.config.seed;
                for (int64_t r = 0; r < sweep.replicates; r++) {
                    PlannedRun run;
                    run.index = run.group = static_cast<int64_t>(sweep.runs.size());
                    run.spec = spec;
                    run.varied = varied;
                    run.spec.replicate = r;
                    run.spec.config.seed = seed + static_cast<uint32_t>(r);
                    if (sweep.replicates > 1) run.varied.emplace_back("replicate", std::to_string(r));
                    run.id = run_id(run.spec);
                    if (!ids.insert(run.id).second)
                        fail_at(marks.empty() ? mark : marks.front().second, "", what + ": listed twice (a grid or zip list repeats a value)");
                    sweep.runs.push_back(std::move(run));
                }
            }
            size_t f = factors_.size();
            while (f > 0 && ++pick[f - 1] == factors_[f - 1].choices.size()) pick[--f] = 0;
            if (f == 0) break;
        }
        // Interleave groups: runs whose canonical config without the interleave keys is the same.
        std::map<std::string, int64_t> first_of_group;
        for (auto &run : sweep.runs) {
            RunSpec key_spec = run.spec;
            for (auto &key : sweep.interleave) find_run_field(key)->set(key_spec, find_run_field(key)->get(RunSpec()));
            run.group = first_of_group.emplace(canonical(key_spec), run.index).first->second;
        }
        for (auto &ex : exclusions_)
            if (ex.matched == 0) fail_at(ex.mark, "exclude", "matches no run (check its values against the grid)");
        if (sweep.runs.empty()) fail_at(mark, "exclude", "every run is excluded");
    }

    std::string path_;
    LoadOptions opts_;
    RunSpec base_;
    std::set<std::string> base_keys_, varied_;
    std::vector<std::pair<std::string, YAML::Mark>> base_marks_;
    std::vector<std::string> varied_order_;
    std::vector<Factor> factors_;
    std::vector<Exclusion> exclusions_;
    mutable std::map<std::string, YAML::Mark> key_marks_;
};

}  // namespace

Sweep parse_sweep(const std::string &yaml_text, const std::string &path, const LoadOptions &opts) {
    return Parser(path, opts).parse(yaml_text);
}

Sweep load_sweep(const std::string &path, const LoadOptions &opts) {
    if (std::filesystem::is_directory(path)) fail(path, ": is a directory, not a sweep file");
    std::ifstream in(path);
    if (!in) fail(path, ": cannot read sweep file");
    std::stringstream text;
    text << in.rdbuf();
    return parse_sweep(text.str(), path, opts);
}

}  // namespace qrnn::sweep
