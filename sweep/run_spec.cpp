#include "sweep/run_spec.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "core/error.h"
#include "core/named_table.h"
#include "lm/train_config.h"
#include "plugins/model.h"
#include "runtime/compare.h"

namespace qrnn::sweep {
namespace {

int64_t as_int(const Value &v) { return std::get<int64_t>(v); }
double as_float(const Value &v) { return std::get<double>(v); }
const std::string &as_str(const Value &v) { return std::get<std::string>(v); }

template <class Member>
RunField int_field(const char *name, Member member) {
    return {name, FieldKind::Int, [member](RunSpec &s, const Value &v) { s.config.*member = as_int(v); },
            [member](const RunSpec &s) { return Value(int64_t(s.config.*member)); }};
}
RunField str_field(const char *name, std::string ModelConfig::*member) {
    return {name, FieldKind::Str, [member](RunSpec &s, const Value &v) { s.config.*member = as_str(v); },
            [member](const RunSpec &s) { return Value(s.config.*member); }};
}
RunField float_field(const char *name, double ModelConfig::*member) {
    return {name, FieldKind::Float, [member](RunSpec &s, const Value &v) { s.config.*member = as_float(v); },
            [member](const RunSpec &s) { return Value(s.config.*member); }};
}

std::vector<RunField> make_fields() {
    std::vector<RunField> f{
        str_field("model", &ModelConfig::model),
        str_field("pooling", &ModelConfig::pooling),
        str_field("schedule", &ModelConfig::schedule),
        str_field("target", &ModelConfig::target),
        str_field("precision", &ModelConfig::precision),
        int_field("window", &ModelConfig::window),
        int_field("batch", &ModelConfig::batch),
        int_field("seq", &ModelConfig::seq),
        int_field("input", &ModelConfig::input),
        int_field("hidden", &ModelConfig::hidden),
        int_field("layers", &ModelConfig::layers),
        {"mode", FieldKind::Str,
         [](RunSpec &s, const Value &v) {
             if (as_str(v) != "eval" && as_str(v) != "train") fail("must be eval or train (got '", as_str(v), "')");
             s.config.stochastic = as_str(v) == "train";
         },
         [](const RunSpec &s) { return Value(std::string(s.config.stochastic ? "train" : "eval")); }},
        {"pass", FieldKind::Str,
         [](RunSpec &s, const Value &v) {
             if (as_str(v) != "inference" && as_str(v) != "training")
                 fail("must be inference or training (got '", as_str(v), "')");
             s.config.pass = as_str(v);
         },
         [](const RunSpec &s) { return Value(s.config.pass); }},
        float_field("zoneout", &ModelConfig::zoneout),
        float_field("dropout", &ModelConfig::dropout),
        {"seed", FieldKind::Int,
         [](RunSpec &s, const Value &v) {
             if (as_int(v) < 0 || as_int(v) > 0xffffffffLL) fail("must be in [0, 2^32) (got ", as_int(v), ")");
             s.config.seed = static_cast<uint32_t>(as_int(v));
         },
         [](const RunSpec &s) { return Value(int64_t(s.config.seed)); }},
        {"warmup", FieldKind::Int,
         [](RunSpec &s, const Value &v) {
             if (as_int(v) < 0) fail("must be >= 0 (got ", as_int(v), ")");
             s.measure.warmup = as_int(v);
         },
         [](const RunSpec &s) { return Value(s.measure.warmup); }},
        {"repeats", FieldKind::Int,
         [](RunSpec &s, const Value &v) {
             if (as_int(v) < 1) fail("must be >= 1 (got ", as_int(v), ")");
             s.measure.repeats = as_int(v);
         },
         [](const RunSpec &s) { return Value(s.measure.repeats); }},
        {"verify", FieldKind::Bool, [](RunSpec &s, const Value &v) { s.measure.verify = as_int(v) != 0; },
         [](const RunSpec &s) { return Value(int64_t(s.measure.verify)); }},
        {"tolerance", FieldKind::Float,
         [](RunSpec &s, const Value &v) {
             if (!valid_tolerance(as_float(v))) fail("must be a finite number > 0 (got ", as_float(v), ")");
             s.measure.tolerance = as_float(v);
         },
         // Unset reads as the f32 default, so run ids of sweeps that never set it stay what they were.
         [](const RunSpec &s) { return Value(s.measure.tolerance.value_or(kDefaultTolerance)); }},
    };
    return f;
}

}  // namespace

double Measurement::tolerance_for(const ModelConfig &config) const {
    return tolerance.value_or(verify_tolerance(config));
}

const std::vector<RunField> &run_fields() {
    static const std::vector<RunField> fields = make_fields();
    return fields;
}

const RunField *find_run_field(const std::string &name) { return find_named(run_fields(), name); }

std::string known_field_names() { return named_list(run_fields()) + ", knob.NAME, train.KEY"; }

bool is_knob_key(const std::string &key) {
    return key.size() > std::string(kKnobPrefix).size() && key.rfind(kKnobPrefix, 0) == 0;
}

bool is_train_key(const std::string &key) {
    return key.size() > std::string(kTrainPrefix).size() && key.rfind(kTrainPrefix, 0) == 0;
}

FieldKind key_kind(const std::string &key) {
    if (is_knob_key(key)) return FieldKind::Int;
    if (is_train_key(key)) return FieldKind::Str;
    const RunField *f = find_run_field(key);
    if (!f) fail("unknown key '", key, "' (known: ", known_field_names(), ")");
    return f->kind;
}

bool is_measurement_key(const std::string &key) {
    return key == "warmup" || key == "repeats" || key == "verify" || key == "tolerance";
}

void set_key(RunSpec &spec, const std::string &key, const Value &value) {
    if (is_knob_key(key)) {
        const std::string knob = key.substr(std::string(kKnobPrefix).size());
        spec.knobs[knob] = knob_value(knob, std::get<int64_t>(value));
        return;
    }
    if (is_train_key(key)) {
        const std::string name = key.substr(std::string(kTrainPrefix).size()), text = value_str(value);
        lm::TrainConfig probe;
        lm::set_train_key(probe, name, text, "train key");  // unknown key or malformed value: an error
        spec.train[name] = text;
        return;
    }
    const RunField *f = find_run_field(key);
    if (!f) fail("unknown key '", key, "' (known: ", known_field_names(), ")");
    f->set(spec, value);
}

std::string value_str(const Value &v) {
    if (auto i = std::get_if<int64_t>(&v)) return std::to_string(*i);
    if (auto s = std::get_if<std::string>(&v)) return *s;
    double d = std::get<double>(v);
    char buf[64];
    for (int precision = 1; precision <= 17; precision++) {
        std::snprintf(buf, sizeof buf, "%.*g", precision, d);
        if (std::strtod(buf, nullptr) == d) break;
    }
    return buf;
}

std::string knobs_str(const Knobs &knobs) {
    std::string s;
    for (auto &[name, value] : knobs) s += (s.empty() ? "" : ",") + name + "=" + std::to_string(value);
    return s;
}

std::string train_settings(const RunSpec &spec) {
    std::string text;
    for (auto &[name, value] : spec.train) text += (text.empty() ? "" : ",") + name + "=" + value;
    return text;
}

std::string canonical(const RunSpec &spec) {
    static const RunSpec defaults;
    std::vector<std::string> items;
    for (auto &f : run_fields()) {
        const std::string value = value_str(f.get(spec));
        if (value != value_str(f.get(defaults))) items.push_back(f.name + "=" + value);
    }
    if (!spec.knobs.empty()) items.push_back("knobs=" + knobs_str(spec.knobs));
    if (!spec.train.empty()) items.push_back("train=" + train_settings(spec));
    if (spec.replicate != 0) items.push_back("replicate=" + std::to_string(spec.replicate));
    std::sort(items.begin(), items.end());
    std::string s;
    for (auto &item : items) s += item + ";";
    return s;
}

std::string run_id(const RunSpec &spec) {
    uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a 64
    for (unsigned char ch : canonical(spec)) {
        hash ^= ch;
        hash *= 0x100000001b3ULL;
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(hash));
    return buf;
}

}  // namespace qrnn::sweep
