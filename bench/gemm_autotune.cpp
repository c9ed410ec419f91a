#include "bench/gemm_autotune.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <iostream>
#include <optional>

#include "core/error.h"
#include "runtime/timing.h"
#include "schedules/cpu_target.h"
#include "schedules/gemm_tuning.h"
#include "schedules/tuning_db.h"
#include "bench/bench_kernels.h"
#include "tools/command.h"
#include "tools/progress_bar.h"
#include "bench/sgemm_references.h"
#include "report/table.h"

namespace qrnn::cli {
namespace {

constexpr int kGemms = 3;  // per shape: conv, dW, dX
const char *const kGemmNames[kGemms] = {"conv", "dW", "dX"};
constexpr double kTolerance = 1e-4;  // of |ours - sgemm| / max|sgemm|, as `qrnn bench`

struct Trial {
    GemmCoreKnobs knobs;
    std::vector<double> ratios;  // per (shape, gemm): the best sgemm's time / ours, median of per-round ratios
    double score = 0, ours_ms = 0, rel_error = 0;
    std::string status = "ok", error;
    // The geometric mean of one op's ratios over the shapes (op < 0: of all).
    double op_score(int op) const {
        double log_sum = 0;
        int n = 0;
        for (size_t i = 0; i < ratios.size(); i++)
            if (op < 0 || static_cast<int>(i % kGemms) == op) log_sum += std::log(ratios[i]), n++;
        return n ? std::exp(log_sum / n) : 0;
    }
};

GemmTile &op_tile(GemmCoreKnobs &k, int op) { return op == 0 ? k.conv : op == 1 ? k.dweights : k.dinput; }
GemmTile op_tile(const GemmCoreKnobs &k, int op) { return op == 0 ? k.conv : op == 1 ? k.dweights : k.dinput; }

std::string tile_text(GemmTile t) { return std::to_string(t.h_vectors) + "x" + std::to_string(t.t); }

// Register tiles worth trying for op (0 conv, 1 dW, 2 dX), its default first; those its knobs refuse for the target
// (range, registers) are dropped.
std::vector<GemmTile> tile_candidates(int op, const Halide::Target &target) {
    const bool wide = cpu_traits(target).vector_registers >= 32;
    std::vector<GemmTile> all = wide ? std::vector<GemmTile>{{4, 6}, {3, 8}, {5, 5}, {4, 4}, {2, 12}, {5, 4}, {3, 6}}
                                     : std::vector<GemmTile>{{2, 6}, {3, 4}, {2, 5}, {1, 12}, {2, 4}, {1, 8}};
    if (wide && op == 2) all.push_back({6, 4});
    const GemmCoreKnobs defaults = default_gemm_core_knobs(target);
    std::vector<GemmTile> out{op_tile(defaults, op)};
    for (GemmTile t : all) {
        GemmCoreKnobs probe = defaults;
        op_tile(probe, op) = t;
        try {
            gemm_core_knobs_from(probe.knobs(), target);
        } catch (const Error &) {
            continue;
        }
        if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
    }
    return out;
}

class GemmSearch {
public:
    GemmSearch(const GemmAutotuneOptions &o) : o_(o), refs_(bench::sgemm_references(o.target)) {}

    // Measures one set of knobs (never throws for a failing one: status "failed" or "wrong") and records it.
    const Trial &measure(const GemmCoreKnobs &knobs) {
        Trial t;
        t.knobs = knobs;
        try {
            run(t);
        } catch (const std::exception &e) {
            t.status = "failed", t.error = e.what();
        }
        t.score = t.status == "ok" ? t.op_score(-1) : 0;
        append_tuning_record(o_.db, record(t));
        trials_.push_back(t);
        return trials_.back();
    }
    const std::vector<Trial> &trials() const { return trials_; }
    bool measured(const GemmCoreKnobs &k) const {
        return std::any_of(trials_.begin(), trials_.end(), [&](const Trial &t) { return t.knobs == k; });
    }
    // The mean score of the verified trials of these knobs (0 if none); `count` gets their number.
    double mean_score(const GemmCoreKnobs &k, int *count = nullptr) const {
        double sum = 0;
        int n = 0;
        for (const Trial &t : trials_)
            if (t.status == "ok" && t.knobs == k) sum += t.score, n++;
        if (count) *count = n;
        return n ? sum / n : 0;
    }
    // The verified knobs of the highest mean score, none if none.
    std::optional<GemmCoreKnobs> best() const {
        std::optional<GemmCoreKnobs> b;
        for (const Trial &t : trials_)
            if (t.status == "ok" && (!b || mean_score(t.knobs) > mean_score(*b))) b = t.knobs;
        return b;
    }
    // The op's tile of the highest mean op score over the verified trials with the block sizes of `blocks`.
    GemmTile best_tile(int op, const GemmCoreKnobs &blocks) const {
        std::vector<std::pair<GemmTile, std::pair<double, int>>> sums;
        for (const Trial &t : trials_) {
            if (t.status != "ok" || t.knobs.block_bytes != blocks.block_bytes || t.knobs.panel_bytes != blocks.panel_bytes)
                continue;
            const GemmTile tile = op_tile(t.knobs, op);
            auto it = std::find_if(sums.begin(), sums.end(), [&](auto &e) { return e.first == tile; });
            if (it == sums.end()) it = sums.insert(sums.end(), {tile, {0.0, 0}});
            it->second.first += t.op_score(op), it->second.second++;
        }
        GemmTile best = op_tile(blocks, op);
        double best_mean = 0;
        for (auto &[tile, sum] : sums)
            if (sum.first / sum.second > best_mean) best = tile, best_mean = sum.first / sum.second;
        return best;
    }
    const std::vector<std::string> &reference_names() const { return best_ref_names_; }

private:
    void run(Trial &t) {
        GemmCoreTrial scope(o_.target, t.knobs);
        for (size_t s = 0; s < o_.shapes.size(); s++) {
            bench::ConvGemm conv(*o_.pooling, o_.shapes[s], o_.target);
            bench::BackwardGemms backward(*o_.pooling, o_.shapes[s], o_.target);
            std::function<void()> ours[kGemms] = {[&] { conv.run_halide(); }, [&] { backward.run_dweights(); },
                                                  [&] { backward.run_dinput(); }};
            auto reference = [&](int g, size_t i) -> std::function<void()> {
                if (g == 0) return [&conv, i] { conv.run_reference(i); };
                if (g == 1) return [&backward, i] { backward.run_reference_dweights(i); };
                return [&backward, i] { backward.run_reference_dinput(i); };
            };
            // The first trial to reach a shape picks the best reference of each of its GEMMs.
            if (best_ref_.size() < (s + 1) * kGemms) choose_references(reference);
            // Against one reference each (any computes the same GEMMs).
            const auto [dw_diff, dx_diff] = backward.max_rel_diff(best_ref_.at(s * kGemms + 1));
            for (double diff : {conv.max_rel_diff(best_ref_.at(s * kGemms)), dw_diff, dx_diff}) {
                t.rel_error = std::max(t.rel_error, diff);
                if (!(diff <= kTolerance)) t.status = "wrong";
            }
            std::vector<std::function<void()>> runs;
            for (int g = 0; g < kGemms; g++) runs.push_back(ours[g]), runs.push_back(reference(g, best_ref_.at(s * kGemms + g)));
            const std::vector<Timing> timings = bench::time_interleaved(runs, o_.warmup, o_.repeats);
            for (int g = 0; g < kGemms; g++) {
                t.ratios.push_back(bench::round_ratios(timings[2 * g], timings[2 * g + 1]).median);
                t.ours_ms += timings[2 * g].median();
            }
        }
    }

    // Per GEMM of this shape, the reference with the lowest median, timed round-robin.
    template <class Reference>
    void choose_references(Reference reference) {
        for (int g = 0; g < kGemms; g++) {
            std::vector<std::function<void()>> runs;
            for (size_t i = 0; i < refs_.size(); i++) runs.push_back(reference(g, i));
            const std::vector<Timing> timings = bench::time_interleaved(runs, o_.warmup, o_.repeats);
            size_t best = 0;
            for (size_t i = 1; i < timings.size(); i++)
                if (timings[i].median() < timings[best].median()) best = i;
            best_ref_.push_back(best);
            best_ref_names_.push_back(refs_[best].name);
        }
    }

    TuningRecord record(const Trial &t) const {
        TuningRecord r;
        r.time = utc_now_iso();
        r.cpu = tuning_cpu_name();
        r.pooling = o_.pooling->name;
        r.target = tuning_target_name(o_.target);
        r.shape = o_.shapes.front();
        r.schedule = kGemmCoreSchedule;
        r.knobs = t.knobs.knobs();
        r.status = t.status;
        r.error = t.error;
        r.median_ms = t.ours_ms;
        r.repeats = o_.repeats;
        r.rel_error = t.rel_error;
        r.score = t.score;
        return r;
    }

    const GemmAutotuneOptions &o_;
    const std::vector<bench::SgemmReference> &refs_;
    std::vector<size_t> best_ref_;  // per (shape, gemm)
    std::vector<std::string> best_ref_names_;
    std::vector<Trial> trials_;
};

// The knobs to try after the defaults, in order; each step may depend on what was measured. The steps: the tiles
// (every op's i-th candidate in trial i); each op's best tile together; the block sizes, one at a time, around the
// best so far; the better block and panel sizes together; then the best few and the defaults once more (timing
// noise of a few percent is as large as most differences: a choice rests on the mean of two trials).
class GemmCandidates {
public:
    GemmCandidates(const Halide::Target &target) : defaults_(default_gemm_core_knobs(target)) {
        for (int op = 0; op < 3; op++) tiles_[op] = tile_candidates(op, target);
        tile_trials_ = std::max({tiles_[0].size(), tiles_[1].size(), tiles_[2].size()});
        const int64_t l2 = cpu_traits(target).l2_bytes;
        blocks_ = {l2, 4 * l2};
        panels_ = {l2 / 4, l2};
    }
    int planned() const { return static_cast<int>(combined_step() + 1 + kConfirmed + 1); }

    std::optional<GemmCoreKnobs> next(const GemmSearch &search) {
        while (step_ <= combined_step() && search.best()) {
            std::optional<GemmCoreKnobs> k = at(step_++, search);
            if (k && !search.measured(*k)) return k;
        }
        if (step_ == combined_step() + 1 && search.best()) {  // the confirmation round, once
            step_++;
            std::vector<GemmCoreKnobs> ranked;
            for (const Trial &t : search.trials())
                if (t.status == "ok" && std::find(ranked.begin(), ranked.end(), t.knobs) == ranked.end()) ranked.push_back(t.knobs);
            std::stable_sort(ranked.begin(), ranked.end(),
                             [&](auto &a, auto &b) { return search.mean_score(a) > search.mean_score(b); });
            if (ranked.size() > kConfirmed) ranked.resize(kConfirmed);
            if (std::find(ranked.begin(), ranked.end(), defaults_) == ranked.end()) ranked.push_back(defaults_);
            for (const GemmCoreKnobs &k : ranked) {
                int count = 0;
                search.mean_score(k, &count);
                if (count == 1) confirm_.push_back(k);
            }
        }
        if (confirm_.empty()) return std::nullopt;
        GemmCoreKnobs k = confirm_.front();
        confirm_.erase(confirm_.begin());
        return k;
    }

private:
    static constexpr size_t kConfirmed = 3;
    size_t combined_step() const { return tile_trials_ + 1 + blocks_.size() + panels_.size(); }

    std::optional<GemmCoreKnobs> at(size_t i, const GemmSearch &search) {
        GemmCoreKnobs k = defaults_;
        if (i < tile_trials_) {
            for (int op = 0; op < 3; op++)
                if (i < tiles_[op].size()) op_tile(k, op) = tiles_[op][i];
            return k;
        }
        if (i == tile_trials_) {
            for (int op = 0; op < 3; op++) op_tile(k, op) = search.best_tile(op, defaults_);
            return k;
        }
        const size_t b = i - tile_trials_ - 1;
        if (b == 0) base_ = *search.best();
        k = base_;
        if (b < blocks_.size()) {
            k.block_bytes = blocks_[b];
        } else if (b < blocks_.size() + panels_.size()) {
            k.panel_bytes = panels_[b - blocks_.size()];
        } else {  // the better of each size, measured around base_
            k.block_bytes = best_around_base(search, &GemmCoreKnobs::block_bytes);
            k.panel_bytes = best_around_base(search, &GemmCoreKnobs::panel_bytes);
        }
        return k;
    }

    // The value of `size` with the best mean score among base_ and the trials that differ from it in that size only.
    int64_t best_around_base(const GemmSearch &search, int64_t GemmCoreKnobs::*size) const {
        GemmCoreKnobs best = base_;
        for (const Trial &t : search.trials()) {
            GemmCoreKnobs only = base_;
            only.*size = t.knobs.*size;
            if (t.knobs == only && search.mean_score(only) > search.mean_score(best)) best = only;
        }
        return best.*size;
    }

    GemmCoreKnobs defaults_, base_;
    std::vector<GemmTile> tiles_[3];
    std::vector<int64_t> blocks_, panels_;
    std::vector<GemmCoreKnobs> confirm_;
    size_t tile_trials_ = 0, step_ = 0;
};

void print_results(const GemmAutotuneOptions &o, const GemmSearch &search) {
    std::vector<std::string> header{"conv", "dW", "dX", "blocks", "status"};
    for (const LayerShape &s : o.shapes)
        for (const char *g : kGemmNames) header.push_back(std::string(g) + " m=" + std::to_string(s.m));
    header.push_back("score");
    Table table(header);
    for (const Trial &t : search.trials()) {
        std::vector<std::string> row{tile_text(t.knobs.conv), tile_text(t.knobs.dweights), tile_text(t.knobs.dinput),
                                     std::to_string(t.knobs.block_bytes / 1024) + "K/" + std::to_string(t.knobs.panel_bytes / 1024) + "K",
                                     t.status};
        for (size_t i = 0; i < o.shapes.size() * kGemms; i++) row.push_back(i < t.ratios.size() ? fixed(t.ratios[i], 3) : "-");
        row.push_back(t.status == "ok" ? fixed(t.score, 3) : "-");
        table.add(row);
    }
    table.print(std::cout);
    std::vector<std::string> names = search.reference_names();
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    std::string refs;
    for (const std::string &n : names) refs += (refs.empty() ? "" : ", ") + n;
    std::cout << "autotune --gemm: ratios are the best sgemm's time over ours (" << refs << "), medians of "
              << o.repeats << " rounds; score: their geometric mean\n";
}

}  // namespace

int gemm_autotune(const GemmAutotuneOptions &o, const std::atomic<bool> &interrupted) {
    std::cerr << "autotune --gemm: CPU " << cpu_info().describe() << ", target " << tuning_target_name(o.target) << "\n";
    for (const LayerShape &s : o.shapes) std::cerr << "autotune --gemm: conv, dW and dX at " << s.key() << "\n";
    GemmSearch search(o);
    GemmCandidates candidates(o.target);
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    const int planned = o.trials > 0 ? std::min(o.trials, candidates.planned()) : candidates.planned();
    auto progress = [&] {
        const int done = static_cast<int>(search.trials().size());
        double fraction = static_cast<double>(done) / planned;
        if (o.seconds > 0) fraction = std::max(fraction, elapsed() / o.seconds);
        const double eta = done ? elapsed() / done * (planned - done) : 0;
        const std::optional<GemmCoreKnobs> best = search.best();
        draw_progress("autotune --gemm ", fraction, done, planned, elapsed(), o.seconds > 0 ? std::min(eta, o.seconds - elapsed()) : eta,
                      best ? "best score " + fixed(search.mean_score(*best), 3) : "");
    };
    std::optional<GemmCoreKnobs> next = default_gemm_core_knobs(o.target);
    while (next && !interrupted && (o.trials == 0 || static_cast<int>(search.trials().size()) < o.trials) &&
           (o.seconds == 0 || elapsed() < o.seconds)) {
        progress();
        search.measure(*next);
        next = candidates.next(search);
    }
    progress();
    std::cerr << "\n";
    if (interrupted) std::cerr << "autotune --gemm: interrupted; the measured trials are kept in " << o.db << "\n";
    print_results(o, search);
    std::cout << "autotune --gemm: " << search.trials().size() << " trials appended to " << o.db << "\n";
    // What the ops will use: the database's choice (this run's records and any earlier ones at the same shape).
    const std::optional<TuningRecord> chosen =
        best_gemm_core_record(read_tuning_records(o.db), tuning_target_name(o.target), tuning_cpu_name());
    if (!chosen) {
        std::cout << "autotune --gemm: no verified trial\n";
        return kExitOk;
    }
    const std::string knobs = gemm_core_knobs_from(chosen->knobs, o.target).describe();
    std::cout << "autotune --gemm: chosen " << knobs.substr(0, knobs.find(" (")) << ": mean score " << fixed(chosen->score, 3);
    const GemmCoreKnobs defaults = default_gemm_core_knobs(o.target);
    int n = 0;
    const double default_score = search.mean_score(defaults, &n);
    if (n > 0) std::cout << "; the defaults " << fixed(default_score, 3) << " (another set must pass them by "
                         << fixed(100 * (kGemmCoreMargin - 1), 0) << "%)";
    std::cout << "\nautotune --gemm: every op on the GEMM core uses it for this CPU and target while the tuning database is "
              << o.db << " (QRNN_TUNING_DB; QRNN_GEMM_TUNING=defaults ignores it)\n";
    return kExitOk;
}

}  // namespace qrnn::cli
