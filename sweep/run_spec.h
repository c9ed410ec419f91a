// One run of a sweep: a model configuration plus how to measure it, and the table of named fields through
// which sweep YAML sets it, results columns record it, and the run id hashes it.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "runtime/config.h"
#include "schedules/schedule.h"

namespace qrnn::sweep {

struct Measurement {
    int64_t warmup = 1;
    int64_t repeats = 5;
    bool verify = false;
    // Max relative error accepted when verifying; unset: the configuration's default (verify_tolerance, plugins/model.h).
    std::optional<double> tolerance;
    double tolerance_for(const ModelConfig &config) const;
};

struct RunSpec {
    ModelConfig config;
    Measurement measure;
    Knobs knobs;            // schedule knob overrides ("knob.NAME" keys)
    int64_t replicate = 0;  // 0..repeats-1 of the sweep's top-level `repeats`; model seed = seed + replicate
    // "train.KEY" settings (keys of `qrnn train`, lm/train_config.h): when any is set, the run trains a
    // language model (sweep/train_run.h) instead of timing a pass.
    std::map<std::string, std::string> train;
};

using Value = std::variant<int64_t, double, std::string>;
enum class FieldKind { Int, Float, Str, Bool };  // Bool is stored as Int 0/1

struct RunField {
    std::string name;
    FieldKind kind;
    std::function<void(RunSpec &, const Value &)> set;  // throws qrnn::Error on a bad value (e.g. mode)
    std::function<Value(const RunSpec &)> get;
};

// Every settable field: the ModelConfig fields, then the measurement settings. Keys "knob.NAME" are
// schedule knobs (integers) and keys "train.KEY" training settings (strings); neither is in this table.
const std::vector<RunField> &run_fields();
const RunField *find_run_field(const std::string &name);  // nullptr if none
std::string known_field_names();                         // for error messages

constexpr const char *kKnobPrefix = "knob.";
bool is_knob_key(const std::string &key);
constexpr const char *kTrainPrefix = "train.";
bool is_train_key(const std::string &key);
FieldKind key_kind(const std::string &key);  // of a known field or knob key
bool is_measurement_key(const std::string &key);  // warmup, repeats, verify, tolerance
void set_key(RunSpec &spec, const std::string &key, const Value &value);

std::string value_str(const Value &v);  // integers plain, floats shortest round-trip, strings raw
std::string knobs_str(const Knobs &knobs);  // "a=1,b=2" (sorted), "" when empty
std::string train_settings(const RunSpec &spec);  // the train.* keys as "epochs=14,lr=20" (sorted), "" when none

// "name=value;..." over the fields (sorted), knobs and replicate that differ from their defaults: what the run
// id hashes. Leaving defaults out keeps existing ids when a field with a default is added to the table.
std::string canonical(const RunSpec &spec);
std::string run_id(const RunSpec &spec);  // 16 hex digits of the 64-bit FNV-1a hash of canonical(spec)

}  // namespace qrnn::sweep
