// The sections of `qrnn bench` (bench/bench_report.h): each times our kernels against this machine's best
// references on the same work, side by side in one process, and adds its ratios as rows.
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "core/error.h"
#include "harness/autotuner.h"
#include "runtime/compiled_layer.h"
#include "runtime/timing.h"
#include "schedules/gemm_tuning.h"
#include "schedules/tuning_db.h"
#include "bench/bench_arch.h"
#include "bench/bench_attention.h"
#include "bench/bench_decoder.h"
#include "bench/bench_report.h"
#include "tools/options.h"

namespace qrnn::cli {
namespace {
using bench::time_interleaved;
using bench::time_side_by_side;

struct LayerRun {  // one layer on seeded data, for timing
    ModelConfig cfg;
    Tensor<float> x, h, c;
    LayerParams<float> params;
    LayerState<float> state;
    std::shared_ptr<CompiledLayer> layer;
    LayerRun(const PoolingVariant &pooling, const LayerShape &s, const std::string &schedule, const Halide::Target &target,
             Precision precision = Precision::f32) {
        cfg = layer_config(pooling.name, s);
        x = init_input(cfg);
        params = init_params(cfg)[0];
        state = initial_state<float>(cfg).layers[0];
        h = c = Tensor<float>({s.T, s.B, s.m});
        layer = compiled_layer(pooling, schedule, {}, s, target, precision);
        if (precision == Precision::int8) int8 = quantize_layer(params.weights, largest_magnitude(calibration_input(cfg)));
    }
    void run() {
        LayerCall call{&x, &state, &params, {}, 0, &h, &c};
        call.int8 = int8 ? &*int8 : nullptr;
        layer->run(call);
    }
    std::optional<Int8LayerParams> int8;  // precision int8: calibrated on held-out input of x's distribution
};

std::string shape_text(const LayerShape &s) {
    return "k=" + std::to_string(s.k) + " B=" + std::to_string(s.B) + " T=" + std::to_string(s.T) + " n=" +
           std::to_string(s.n) + " m=" + std::to_string(s.m);
}

// The widths language models are trained at, one layer of each at the LM's B=20 T=105 (k=2).
constexpr int64_t kLmWidths[] = {320, 640, 1024, 1550, 2500};

// The paper grid's 320-unit k=2 corners, the LM widths, and k = 1..4 at 640; --quick: two.
std::vector<LayerShape> bench_gemm_shapes(bool quick) {
    if (quick) return {{128, 16, 320, 320, 2}, {105, 20, 640, 640, 2}};
    std::vector<LayerShape> shapes;
    for (int64_t B : {8, 256})
        for (int64_t T : {32, 512}) shapes.push_back({T, B, 320, 320, 2});
    for (int64_t w : kLmWidths) shapes.push_back({105, 20, w, w, 2});
    for (int64_t k : {1, 3, 4}) shapes.push_back({105, 20, 640, 640, k});
    return shapes;
}

// Training-step shapes for the backward's GEMMs and scan: the paper grid's corners and middle (320 units, k=2)
// and the LM widths; --quick: two.
std::vector<LayerShape> bench_backward_shapes(bool quick) {
    if (quick) return {{128, 16, 320, 320, 2}, {256, 64, 320, 320, 2}};
    std::vector<LayerShape> shapes{{64, 8, 320, 320, 2}, {512, 8, 320, 320, 2}, {256, 64, 320, 320, 2},
                                   {32, 256, 320, 320, 2}, {512, 256, 320, 320, 2}};
    for (int64_t w : kLmWidths)
        if (w != 320) shapes.push_back({105, 20, w, w, 2});
    return shapes;
}

// Timings laid out as t[first + jobs * i + j] (candidate i on job j; j from `offset`, `count` of them): per round,
// the sum over those jobs of the candidate fastest on each (by median); the candidates chosen, and their names
// joined by '/'.
struct BestSum {
    Timing sum;
    std::string names;
    std::vector<size_t> chosen;
};
BestSum best_sum(const std::vector<Timing> &t, size_t first, int jobs, int offset, int count,
                 const std::vector<std::string> &candidates) {
    BestSum b;
    b.sum.ms.assign(t[first].ms.size(), 0.0);
    for (int j = offset; j < offset + count; j++) {
        auto at = [&](size_t i) -> const Timing & { return t[first + jobs * i + j]; };
        size_t best = 0;
        for (size_t i = 1; i < candidates.size(); i++)
            if (at(i).median() < at(best).median()) best = i;
        for (size_t round = 0; round < b.sum.ms.size(); round++) b.sum.ms[round] += at(best).ms[round];
        b.names += (j > offset ? "/" : "") + candidates[best];
        b.chosen.push_back(best);
    }
    return b;
}

std::vector<std::string> sgemm_names(const std::vector<bench::SgemmReference> &refs) {
    std::vector<std::string> names;
    for (const auto &r : refs) names.push_back(r.name);
    return names;
}

// best_sum over the sgemm references, each GEMM a job: the per-round sum and the names.
std::pair<Timing, std::string> best_sgemm_sum(const std::vector<Timing> &t, size_t first, int gemms, int offset,
                                              int count, const std::vector<bench::SgemmReference> &refs) {
    BestSum b = best_sum(t, first, gemms, offset, count, sgemm_names(refs));
    return {b.sum, b.names};
}

// The attention's shapes (T targets, S sources, B sequences, m units): the paper's translation-like setting and
// an awkward one (nothing a multiple of the vector width); --quick: small ones.
std::vector<std::array<int64_t, 4>> bench_attention_shapes(bool quick) {
    if (quick) return {{32, 32, 4, 64}, {7, 5, 3, 33}};
    return {{64, 64, 16, 320}, {37, 53, 5, 203}};
}

// The architectures' shapes: the paper grid's 320 units at B=32 T=128 and B=8 T=512, and an awkward one (odd
// widths, nothing a multiple of the vector width); --quick: two small ones.
std::vector<LayerShape> bench_arch_shapes(bool quick) {
    if (quick) return {{32, 4, 64, 48, 2}, {13, 3, 37, 21, 2}};
    return {{128, 32, 320, 320, 2}, {512, 8, 320, 320, 2}, {37, 5, 203, 77, 2}};
}

}  // namespace

void BenchReport::gemm() {
    for (const LayerShape &s : bench_gemm_shapes(quick)) {
        bench::ConvGemm gemm(pooling, s, target);
        std::vector<std::function<void()>> runs{[&] { gemm.run_halide(); }};
        for (size_t i = 0; i < refs.size(); i++) {
            double diff = gemm.max_rel_diff(i);
            if (diff > 1e-4) fail("conv GEMM and ", refs[i].name, " disagree at ", shape_text(s), " (rel ", diff, ")");
            runs.push_back([&gemm, i] { gemm.run_reference(i); });
        }
        gemm_row("conv GEMM vs best sgemm", shape_text(s), runs, gemm.flops());
    }
}

// bf16 (docs/precision.md) at the widths language models train: the conv GEMM against oneDNN's bf16 GEMM on the
// same rounded operands, and the layer's forward and training step (nn::QrnnLayer: forward with a tape, backward
// with dx) and the LM decoder's training call in bf16 against the same in f32. Without the target's bf16
// dot product both sides are emulated (the rows then say how much slower than f32 that is).
void BenchReport::gemm_bf16() {
    const std::vector<int64_t> widths = quick ? std::vector<int64_t>{320, 640} : std::vector<int64_t>(std::begin(kLmWidths), std::end(kLmWidths));
    for (int64_t w : widths) {
        const LayerShape s{105, 20, w, w, 2};
        bench::ConvGemm gemm(pooling, s, target, Precision::bf16);
        const double diff = gemm.max_rel_diff(0);
        if (diff > 1e-4) fail("bf16 conv GEMM and dnnl_gemm_bf16bf16f32 disagree at ", shape_text(s), " (rel ", diff, ")");
        gemm_row("conv GEMM bf16 vs oneDNN bf16 GEMM", shape_text(s), {[&] { gemm.run_halide(); }, [&] { gemm.run_reference(0); }},
                 gemm.flops(), {"dnnl_gemm_bf16bf16f32"}, 0.85);
        LayerRun f32(pooling, s, "tuned", target), bf16(pooling, s, "tuned", target, Precision::bf16);
        auto [ft, bt] = time_side_by_side([&] { f32.run(); }, [&] { bf16.run(); }, warmup, repeats);
        row("layer forward bf16 vs f32 (f32/bf16)", shape_text(s), fixed(bt.median(), 2) + " ms", fixed(ft.median(), 2) + " ms f32",
            ft.median() / bt.median(), 1.6);
        auto f32_step = bench::qrnn_layer_driver(pooling.name, s, target_text, Precision::f32);
        auto bf16_step = bench::qrnn_layer_driver(pooling.name, s, target_text, Precision::bf16);
        auto [fs, bs] = time_side_by_side([&] { f32_step->step(); }, [&] { bf16_step->step(); }, warmup, repeats);
        row("layer training step bf16 vs f32 (f32/bf16)", shape_text(s), fixed(bs.median(), 2) + " ms",
            fixed(fs.median(), 2) + " ms f32", fs.median() / bs.median(), 1.6);
        // The LM decoder's training call (its 3 GEMMs + the f32 softmax) at Fig. 4 left's rows and vocabulary.
        const int64_t N = s.T * s.B, V = quick ? 4000 : 10000;
        bench::DecoderGemms dec_f32(N, w, V, target), dec_bf16(N, w, V, target, Precision::bf16);
        auto [fd, bd] = time_side_by_side([&] { dec_f32.run_training(); }, [&] { dec_bf16.run_training(); }, warmup, repeats);
        row("decoder training bf16 vs f32 (f32/bf16)", "N=" + std::to_string(N) + " m=" + std::to_string(w) + " V=" + std::to_string(V),
            fixed(bd.median(), 1) + " ms", fixed(fd.median(), 1) + " ms f32", fd.median() / bd.median(), 1.6);
    }
}

// int8 inference (docs/int8.md) at the widths language models train: the layer's forward in int8 (VNNI's vpdpbusd
// where the target has it, else a fallback) against the same layer in f32, side by side.
void BenchReport::layer_int8() {
    const std::vector<int64_t> widths = quick ? std::vector<int64_t>{320, 640} : std::vector<int64_t>(std::begin(kLmWidths), std::end(kLmWidths));
    for (int64_t w : widths) {
        const LayerShape s{105, 20, w, w, 2};
        LayerRun f32(pooling, s, "tuned", target), int8(pooling, s, "tuned", target, Precision::int8);
        auto [ft, it] = time_side_by_side([&] { f32.run(); }, [&] { int8.run(); }, warmup, repeats);
        const bench::RoundRatios r = bench::round_ratios(it, ft);  // f32 time / int8 time, per round
        row("layer forward int8 vs f32 (f32/int8)", shape_text(s), fixed(it.median(), 2) + " ms", fixed(ft.median(), 2) + " ms f32",
            r.median, 2.0, true, &r);
    }
}

void BenchReport::pooling_scan() {
    LayerShape s = quick ? LayerShape{256, 32, 320, 320, 2} : LayerShape{512, 64, 320, 320, 2};
    bench::PoolingScan scan(pooling, s, target, false);
    bench::Triad same_size(static_cast<int64_t>(scan.bytes() / 12), target);
    auto [p, t] = time_side_by_side([&] { scan.run(); }, [&] { same_size.run(); }, warmup, repeats);
    double p_gbs = scan.bytes() / (p.median() * 1e6), t_gbs = same_size.bytes() / (t.median() * 1e6);
    row("pooling scan vs triad (GB/s)", "B=" + std::to_string(s.B) + " T=" + std::to_string(s.T) + " m=" + std::to_string(s.m),
        fixed(p_gbs, 1) + " GB/s", fixed(t_gbs, 1) + " GB/s", p_gbs / t_gbs, 0.85);
}

void BenchReport::layer() {
    const LayerShape s = quick ? LayerShape{128, 16, 320, 320, 2} : LayerShape{256, 64, 320, 320, 2};
    const double G = pooling.gate_count(), elems = static_cast<double>(s.T) * s.B * s.m;
    const double x_bytes = 4.0 * s.T * s.B * s.n;
    // Floors: the GEMM (faster of ours and OpenBLAS, timed in the same rounds as the layers) plus the
    // unavoidable traffic at triad bandwidth (also in the rounds). Unfused: gates written and read back,
    // c and h written; fused: only c and h written. x is read once in both.
    LayerRun tuned(pooling, s, "tuned", target), fused(pooling, s, "fused", target);
    bench::ConvGemm gemm(pooling, s, target);
    std::vector<std::function<void()>> runs{[&] { tuned.run(); }, [&] { fused.run(); }, [&] { triad.run(); },
                                            [&] { gemm.run_halide(); }};
    for (size_t i = 0; i < refs.size(); i++) runs.push_back([&gemm, i] { gemm.run_reference(i); });
    auto timings = time_interleaved(runs, warmup, repeats);
    const Timing &tt = timings[0], &ft = timings[1];
    double gemm_ms = timings[3].median();
    for (size_t i = 4; i < timings.size(); i++) gemm_ms = std::min(gemm_ms, timings[i].median());
    double bw = triad.bytes() / (timings[2].median() * 1e6);
    double floor_unfused = gemm_ms + (x_bytes + 4.0 * elems * (2 * G + 2)) / (bw * 1e6);
    double floor_fused = gemm_ms + (x_bytes + 4.0 * elems * 2) / (bw * 1e6);
    row("layer tuned: floor/time", shape_text(s), fixed(tt.median(), 2) + " ms", fixed(floor_unfused, 2) + " ms (unfused floor)",
        floor_unfused / tt.median(), 0.80);
    row("layer fused: floor/time", shape_text(s), fixed(ft.median(), 2) + " ms", fixed(floor_fused, 2) + " ms (fused floor)",
        floor_fused / ft.median(), 0.80);
    row("fused vs unfused floor (floor/fused)", shape_text(s), fixed(ft.median(), 2) + " ms",
        fixed(floor_unfused, 2) + " ms", floor_unfused / ft.median(), 1.0);
    row("fused vs tuned (tuned/fused)", shape_text(s), fixed(ft.median(), 2) + " ms", fixed(tt.median(), 2) + " ms",
        tt.median() / ft.median(), 1.0);
}

void BenchReport::chunked() {
    std::vector<int64_t> lengths = quick ? std::vector<int64_t>{4096} : std::vector<int64_t>{4096, 16384, 65536};
    for (int64_t m : {320, 64, 16})
        for (int64_t T : lengths) {
            LayerShape s{T, 1, 320, m, 2};
            bench::PoolingScan serial(pooling, s, target, false), chunked(pooling, s, target, true, 64);
            double diff = chunked.max_rel_diff(serial);
            if (diff > 1e-3) fail("chunked and serial scans disagree at T=", T, " (rel ", diff, ")");
            auto [st, ct] = time_side_by_side([&] { serial.run(); }, [&] { chunked.run(); }, warmup, repeats);
            row("pooling: chunked-scan vs serial (serial/chunked)", "B=1 T=" + std::to_string(T) + " m=" + std::to_string(m),
                fixed(ct.median(), 3) + " ms", fixed(st.median(), 3) + " ms", st.median() / ct.median(), 1.5);
        }
    LayerShape s{4096, 1, 320, 320, 2};
    LayerRun tuned(pooling, s, "tuned", target), chunked(pooling, s, "chunked-scan", target);
    auto [tt, ct] = time_side_by_side([&] { tuned.run(); }, [&] { chunked.run(); }, warmup, repeats);
    row("layer: chunked-scan vs tuned (tuned/chunked)", shape_text(s), fixed(ct.median(), 2) + " ms",
        fixed(tt.median(), 2) + " ms", tt.median() / ct.median(), 1.5);
}

void BenchReport::backward() {
    // The training backward's GEMMs (from the same dpre, the schedule's own input_padded/dropout stages
    // included) against the best reference on the same problems (gemm_row).
    for (const LayerShape &s : bench_backward_shapes(quick)) {
        bench::BackwardGemms gemms(pooling, s, target);
        std::vector<std::function<void()>> dw{[&] { gemms.run_dweights(); }}, dx{[&] { gemms.run_dinput(); }};
        for (size_t i = 0; i < refs.size(); i++) {
            auto [dw_diff, dx_diff] = gemms.max_rel_diff(i);
            if (dw_diff > 1e-4 || dx_diff > 1e-4)
                fail("backward GEMMs and ", refs[i].name, " disagree at ", shape_text(s), " (rel dW ", dw_diff, ", dX ", dx_diff, ")");
            dw.push_back([&gemms, i] { gemms.run_reference_dweights(i); });
            dx.push_back([&gemms, i] { gemms.run_reference_dinput(i); });
        }
        for (auto [name, runs] : {std::pair<const char *, std::vector<std::function<void()>> *>{"dW GEMM vs best sgemm", &dw},
                                  {"dX GEMM vs best sgemm", &dx}}) {
            gemm_row(name, shape_text(s), *runs, gemms.flops());
        }
    }
    LayerShape s = quick ? LayerShape{256, 32, 320, 320, 2} : LayerShape{512, 64, 320, 320, 2};
    bench::BackwardScan scan(pooling, s, target);
    bench::Triad same_size(static_cast<int64_t>(scan.bytes() / 12), target);
    // As the GEMMs: the median over rounds of the ratio within each round, 3x the rounds (both stream memory,
    // whose bandwidth other processes' traffic moves between rounds: medians of each side taken apart read
    // 0.79 and 1.19 of triad in two runs of one build).
    auto [p, t] = time_side_by_side([&] { scan.run(); }, [&] { same_size.run(); }, warmup, 3 * repeats);
    double p_gbs = scan.bytes() / (p.median() * 1e6), t_gbs = same_size.bytes() / (t.median() * 1e6);
    const double per_byte = scan.bytes() / same_size.bytes();  // round ratio of times -> of GB/s
    bench::RoundRatios r = bench::round_ratios(p, t);
    r = {r.median * per_byte, r.q1 * per_byte, r.q3 * per_byte};
    row("backward scan (dcell) vs triad (GB/s)", "B=" + std::to_string(s.B) + " T=" + std::to_string(s.T) + " m=" + std::to_string(s.m),
        fixed(p_gbs, 1) + " GB/s", fixed(t_gbs, 1) + " GB/s", r.median, 0.85, true, &r);
}

void BenchReport::autotuned() {
    // The newest verified record of this pooling and target names the shape that was tuned.
    const std::string db = default_tuning_db_path();
    std::optional<TuningRecord> newest;
    for (auto &r : read_tuning_records(db))
        if (r.status == "ok" && r.schedule != kGemmCoreSchedule && r.pooling == pooling.name && r.target == target_name &&
            r.cpu == tuning_cpu_name())
            newest = r;
    if (!newest) fail("--what autotuned: no verified ", pooling.name, " record for this target in ", db, " (run qrnn autotune)");
    LayerShape s = newest->shape;
    LayerRun tuned(pooling, s, "tuned", target), tuned_db(pooling, s, "tuned-db", target);
    auto [tt, dt] = time_side_by_side([&] { tuned.run(); }, [&] { tuned_db.run(); }, warmup, repeats);
    row("autotuned (tuned-db) vs tuned (tuned/tuned-db)", shape_text(s), fixed(dt.median(), 3) + " ms",
        fixed(tt.median(), 3) + " ms", tt.median() / dt.median(), 1.0);
}

void BenchReport::decoder() {
    // Whole decoder calls (GEMMs + fused softmax) against the sum of the best sgemm of each of its GEMMs,
    // all timed in the same rounds; ratio: the median of the per-round ratios, with quartiles (medians of each
    // side taken apart read 0.845-0.917 at N=2100 evaluation in three runs of one build). Shapes: rows N = B*T,
    // hidden m, vocabulary V (Fig. 4 left: 20*105, 640, 10000; the LM widths at the same N and V).
    std::vector<std::array<int64_t, 3>> shapes{{512, 320, 4000}};
    if (!quick)
        for (int64_t w : kLmWidths)
            if (w != 320) shapes.insert(shapes.end() - 1, {2100, w, 10000});
    for (auto [N, m, V] : shapes) {
        bench::DecoderGemms d(N, m, V, target);
        std::vector<std::function<void()>> runs{[&] { d.run_training(); }, [&] { d.run_evaluation(); }};
        for (size_t i = 0; i < refs.size(); i++) {
            double diff = d.loss_rel_diff(i);
            if (diff > 1e-4) fail("decoder loss and ", refs[i].name, "'s logits disagree at N=", N, " (rel ", diff, ")");
            for (int g = 0; g < 3; g++) runs.push_back([&d, i, g] { d.run_reference(i, g); });
        }
        auto t = time_interleaved(runs, warmup, repeats);
        auto [sgemm3, names] = best_sgemm_sum(t, 2, 3, 0, 3, refs);
        const Timing best0 = best_sgemm_sum(t, 2, 3, 0, 1, refs).first;
        const std::string shape = "N=" + std::to_string(N) + " m=" + std::to_string(m) + " V=" + std::to_string(V);
        const double gflop = d.gemm_flops() / 1e9;
        const bench::RoundRatios training = bench::round_ratios(t[0], sgemm3), evaluation = bench::round_ratios(t[1], best0);
        row("decoder training (3 GEMMs + softmax) vs best sgemm x3", shape,
            fixed(t[0].median(), 1) + " ms " + fixed(3 * gflop / t[0].median() * 1e3, 1) + " GFLOP/s",
            fixed(sgemm3.median(), 1) + " ms " + names, training.median, 0.90, true, &training);
        row("decoder evaluation (logits GEMM + softmax) vs best sgemm", shape,
            fixed(t[1].median(), 1) + " ms " + fixed(gflop / t[1].median() * 1e3, 1) + " GFLOP/s",
            fixed(best0.median(), 1) + " ms", evaluation.median, 0.90, true, &evaluation);
    }
}

void BenchReport::attention() {
    // Each whole attention pipeline against two references (bench/bench_attention.h), over 3x the rounds as
    // the backward GEMMs, each ratio the median over rounds of the ratio within a round, with its quartiles:
    //  - the floor (bar 0.80, as the layer's floor): its GEMMs alone, each in the best sgemm and timed apart;
    //  - the same work (bar 0.90, as every GEMM): its steps in order as one call, the fastest of the chains
    //    with every GEMM in one library or each in the sgemm fastest on it alone, the other passes (softmax,
    //    products) each in the oneDNN call fastest on it alone. Timed apart, each piece runs with its operands
    //    in cache: the m=203 backward's chain took 1.07-1.5x the sum of its pieces, as a user's would.
    // Warm calls: each timed call right after an untimed call of itself, so that every side runs with its
    // own threads awake, as in a training step (timed cold, right after ~2.5 ms of the references' calls, our
    // m=203 forward took 0.20-0.30 ms against 0.15-0.19 back to back: docs/schedules.md).
    using bench::AttentionGemms;
    const std::vector<std::string> &pass_refs = AttentionGemms::pass_references();
    const std::vector<std::string> gemm_refs = sgemm_names(refs);
    for (auto [T, S, B, m] : bench_attention_shapes(quick)) {
        AttentionGemms a(T, S, B, m, target);
        std::vector<std::function<void()>> runs{[&] { a.run_forward(); }, [&] { a.run_backward(); }};
        for (size_t i = 0; i < refs.size(); i++) {
            double diff = a.alpha_abs_diff(i);
            if (diff > 1e-5) fail("attention alpha and ", refs[i].name, "'s scores disagree at ", a.shape(), " (abs ", diff, ")");
            for (int g = 0; g < AttentionGemms::kGemms; g++) runs.push_back([&a, i, g] { a.run_reference(i, g); });
        }
        const size_t first_pass = runs.size();
        for (size_t i = 0; i < pass_refs.size(); i++) {
            if (double diff = a.passes_abs_diff(i); diff > 1e-5)
                fail(pass_refs[i], "'s softmax or products disagree with a double loop at ", a.shape(), " (abs ", diff, ")");
            for (int p = 0; p < AttentionGemms::kPasses; p++) runs.push_back([&a, i, p] { a.run_reference_pass(i, p); });
        }
        auto t = time_interleaved(runs, warmup, 3 * repeats, /*warm_calls=*/true);
        const int nf = AttentionGemms::kForwardGemms, nb = AttentionGemms::kGemms - nf;
        const int pf = AttentionGemms::kForwardPasses, pb = AttentionGemms::kPasses - pf;
        BestSum gemms[2], passes[2];  // [forward, backward]
        for (int d = 0; d < 2; d++) {
            gemms[d] = best_sum(t, 2, AttentionGemms::kGemms, d ? nf : 0, d ? nb : nf, gemm_refs);
            passes[d] = best_sum(t, first_pass, AttentionGemms::kPasses, d ? pf : 0, d ? pb : pf, pass_refs);
        }
        // Chain candidates per direction: every GEMM in one library (one per sgemm reference), or each in the one
        // fastest on it alone; the passes each in the oneDNN call fastest on it alone.
        struct Chain {
            std::vector<size_t> gemm_refs[2];
            std::string names[2];
        };
        std::vector<Chain> candidates(refs.size() + 1);
        for (int d = 0; d < 2; d++) {
            for (size_t i = 0; i < refs.size(); i++) {
                candidates[i].gemm_refs[d].assign(d ? nb : nf, i);
                candidates[i].names[d] = refs[i].name + " x" + std::to_string(d ? nb : nf);
            }
            candidates.back().gemm_refs[d] = gemms[d].chosen, candidates.back().names[d] = gemms[d].names;
        }
        std::vector<std::function<void()>> chains{[&] { a.run_forward(); }, [&] { a.run_backward(); }};
        for (const Chain &c : candidates)
            for (int d = 0; d < 2; d++)
                chains.push_back([&a, &c, &passes, d] { a.run_reference_chain(d == 0, c.gemm_refs[d], passes[d].chosen); });
        auto tc = time_interleaved(chains, warmup, 3 * repeats, /*warm_calls=*/true);
        for (int d = 0; d < 2; d++) {
            double flops = 0;
            for (int g = d ? nf : 0; g < (d ? AttentionGemms::kGemms : nf); g++) flops += a.gemm_flops(g);
            const std::string pass = d ? "backward" : "forward", count = std::to_string(d ? nb : nf);
            auto ours_text = [&](const Timing &ours) {
                return fixed(ours.median(), 4) + " ms " + fixed(flops / ours.median() * 1e-6, 1) + " GFLOP/s";
            };
            size_t best = 0;
            for (size_t c = 1; c < candidates.size(); c++)
                if (tc[2 + 2 * c + d].median() < tc[2 + 2 * best + d].median()) best = c;
            const Timing &chain = tc[2 + 2 * best + d];
            bench::RoundRatios r = bench::round_ratios(tc[d], chain);
            row("attention " + pass + " vs its steps in the best libraries, in order (same work), warm calls",
                a.shape(), ours_text(tc[d]), fixed(chain.median(), 4) + " ms " + candidates[best].names[d] + " + " + passes[d].names,
                r.median, 0.90, true, &r);
            r = bench::round_ratios(t[d], gemms[d].sum);
            row("attention " + pass + " vs its GEMMs alone at best sgemm x" + count + " (floor), warm calls", a.shape(),
                ours_text(t[d]), fixed(gemms[d].sum.median(), 4) + " ms " + gemms[d].names, r.median, 0.80, true, &r);
        }
    }
}

void BenchReport::arch() {
    // Each architecture's nn::Layer against the plain layer doing the same arithmetic (bench/bench_arch.h),
    // forward and training step, every side timed in the same rounds.
    for (const LayerShape &s : bench_arch_shapes(quick)) {
        bench::ArchBench arch = bench::arch_bench(pooling.name, s, target_text);
        auto t = time_interleaved(arch.runs, warmup, repeats);
        for (const auto &c : arch.comparisons)
            for (bool step : {false, true}) {
                const double ours = t[step ? c.step : c.forward].median();
                const double plain = t[step ? c.plain_step : c.plain_forward].median();
                row(c.name + (step ? " training step" : " forward") + " vs " + c.plain + " (plain/ours)",
                    shape_text(s), fixed(ours, 4) + " ms", fixed(plain, 4) + " ms", plain / ours, 0.90);
            }
    }
}

namespace {
// The sections by the name --what gives, in the order they run.
struct BenchSection {
    const char *name;
    void (BenchReport::*run)();
};
const std::vector<BenchSection> &bench_sections() {
    static const std::vector<BenchSection> sections{
        {"gemm", &BenchReport::gemm},           {"gemm-bf16", &BenchReport::gemm_bf16},
        {"int8", &BenchReport::layer_int8},     {"pooling", &BenchReport::pooling_scan},
        {"layer", &BenchReport::layer},         {"chunked", &BenchReport::chunked},
        {"backward", &BenchReport::backward},   {"autotuned", &BenchReport::autotuned},
        {"decoder", &BenchReport::decoder},     {"attention", &BenchReport::attention},
        {"arch", &BenchReport::arch}};
    return sections;
}
}  // namespace

void check_bench_sections(const std::vector<std::string> &wanted) {
    for (const std::string &name : wanted)
        if (std::none_of(bench_sections().begin(), bench_sections().end(),
                         [&](const BenchSection &s) { return name == s.name; }))
            fail("--what: unknown section '", name, "'");
}

void run_bench_sections(BenchReport &report, const std::vector<std::string> &wanted) {
    check_bench_sections(wanted);
    for (const BenchSection &s : bench_sections())
        if (std::find(wanted.begin(), wanted.end(), s.name) != wanted.end()) (report.*s.run)();
}

}  // namespace qrnn::cli
