#include "harness/autotuner.h"

#include <limits>

#include "core/error.h"
#include "plugins/model.h"
#include "reference/reference.h"
#include "runtime/compare.h"
#include "runtime/compiled_layer.h"
#include "runtime/timing.h"

namespace qrnn {

std::string Candidate::key() const {
    std::string k = schedule;
    for (auto &kv : knobs) k += " " + kv.first + "=" + std::to_string(kv.second);
    return k;
}

CandidateGenerator::CandidateGenerator(std::vector<std::string> schedules, uint32_t seed, const Halide::Target &target)
    : schedules_(std::move(schedules)), rng_(seed), target_(target) {
    for (auto &s : schedules_) find_layer_schedule(s);  // unknown names fail before any trial
}

std::optional<Candidate> CandidateGenerator::next() {
    while (defaults_given_ < schedules_.size()) {
        const LayerSchedule &s = find_layer_schedule(schedules_[defaults_given_++]);
        Candidate c{s.name, default_knobs(s, target_)};
        if (seen_.insert(c.key()).second) return c;
    }
    // Random draws; a bounded number of attempts finds the unseen ones of small spaces too.
    for (int attempt = 0; attempt < 2000 && !schedules_.empty(); attempt++) {
        const LayerSchedule &s = find_layer_schedule(schedules_[rng_() % schedules_.size()]);
        Candidate c{s.name, default_knobs(s, target_)};
        for (auto &[knob, spec] : s.knob_specs)
            if (!spec.choices.empty()) c.knobs[knob] = spec.choices[rng_() % spec.choices.size()];
        if (seen_.insert(c.key()).second) return c;
    }
    return std::nullopt;
}

struct TrialRunner::Data {
    Tensor<float> x, h, c;
    LayerParams<float> params;
    LayerState<float> state;
    ref::LayerOutput reference;
};

TrialRunner::TrialRunner(const ModelConfig &cfg, const std::string &target, int warmup, int repeats, double tolerance)
    : data_(std::make_shared<Data>()), cfg_(cfg), warmup_(warmup), repeats_(repeats), tolerance_(tolerance) {
    cfg_.layers = 1;
    validate_model_config(cfg_);
    cfg_.target = target;
    target_ = parse_target(target);
    target_name_ = tuning_target_name(target_);
    Data &d = *data_;
    d.x = init_input(cfg_);
    d.params = init_params(cfg_)[0];
    d.state = initial_state<float>(cfg_).layers[0];
    d.h = d.c = Tensor<float>({cfg_.seq, cfg_.batch, cfg_.hidden});
    d.reference = ref::layer_forward(cfg_.pooling_variant(), convert<double>(d.x), convert<double>(d.state),
                                     convert<double>(d.params), {}, 0);
}

LayerShape TrialRunner::shape() const { return {cfg_.seq, cfg_.batch, cfg_.input, cfg_.hidden, cfg_.window}; }

TuningRecord TrialRunner::run(const Candidate &candidate, double prune_ms) {
    TuningRecord r;
    r.time = utc_now_iso();
    r.pooling = cfg_.pooling;
    r.target = target_name_;
    r.cpu = tuning_cpu_name();
    r.shape = shape();
    r.schedule = candidate.schedule;
    r.knobs = candidate.knobs;
    try {
        auto layer = compiled_layer(cfg_.pooling_variant(), candidate.schedule, candidate.knobs, shape(), target_);
        Data &d = *data_;
        std::fill(d.h.data.begin(), d.h.data.end(), std::numeric_limits<float>::quiet_NaN());  // no stale pass
        std::fill(d.c.data.begin(), d.c.data.end(), std::numeric_limits<float>::quiet_NaN());
        LayerCall call{&d.x, &d.state, &d.params, {}, 0, &d.h, &d.c};
        Timing timing = time_runs([&] { layer->run(call); }, warmup_, 1);
        const bool pruned = timing.median() > prune_ms;
        if (!pruned && repeats_ > 1) {
            Timing rest = time_runs([&] { layer->run(call); }, 0, repeats_ - 1);
            timing.ms.insert(timing.ms.end(), rest.ms.begin(), rest.ms.end());
        }
        r.median_ms = timing.median();
        r.min_ms = timing.min();
        r.repeats = static_cast<int>(timing.ms.size());
        Comparison cmp = compare(d.h, d.reference.h);
        cmp.merge(compare(d.c, d.reference.c));
        r.rel_error = cmp.finite ? cmp.rel() : std::numeric_limits<double>::infinity();
        r.status = cmp.finite && r.rel_error <= tolerance_ ? (pruned ? "pruned" : "ok") : "wrong";
        if (r.status == "wrong") r.error = "relative error above tolerance " + std::to_string(tolerance_);
        if (pruned) r.error = "first run above " + std::to_string(prune_ms) + " ms: not timed further";
    } catch (const std::exception &e) {
        r.status = "failed";
        r.error = e.what();
        while (!r.error.empty() && (r.error.back() == '\n' || r.error.back() == ' ')) r.error.pop_back();
    }
    return r;
}

ModelConfig layer_config(const std::string &pooling, const LayerShape &s) {
    ModelConfig cfg;
    cfg.pooling = pooling;
    cfg.seq = s.T;
    cfg.batch = s.B;
    cfg.input = s.n;
    cfg.hidden = s.m;
    cfg.window = s.k;
    return cfg;
}

}  // namespace qrnn
