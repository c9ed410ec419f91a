// `qrnn report` of step timings (`qrnn train-speed`): the paper's Fig. 4 left as text.
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "runtime/timing.h"
#include "tools/lm_report.h"
#include "tools/table.h"

namespace qrnn::cli {
namespace {

// One bar: the parts of a step in ms (rnn, softmax, optimization, other).
struct Bar {
    std::string label;
    double parts[4] = {0, 0, 0, 0};
    double total = 0;  // the measured total (ours: median of whole steps) or the paper's
};
constexpr char kGlyph[4] = {'r', 's', 'o', '.'};

double median(const std::vector<double> &ms) { return Timing{ms}.median(); }

// Bars scaled so that the longest total of the group is `width` characters; each part rounded so the
// glyphs of a bar add up to its rounded length.
void print_bars(const std::string &title, const std::vector<Bar> &bars, int width, size_t label_width, std::ostream &os) {
    double longest = 0;
    for (auto &b : bars) longest = std::max(longest, b.parts[0] + b.parts[1] + b.parts[2] + b.parts[3]);
    os << title << "\n";
    for (auto &b : bars) {
        std::string line = "  " + b.label + std::string(label_width - b.label.size(), ' ') + " |";
        double cum = 0;
        int drawn = 0;
        for (int p = 0; p < 4; p++) {
            cum += b.parts[p];
            const int upto = longest > 0 ? static_cast<int>(std::lround(cum / longest * width)) : 0;
            line += std::string(static_cast<size_t>(std::max(0, upto - drawn)), kGlyph[p]);
            drawn = std::max(drawn, upto);
        }
        os << line << std::string(static_cast<size_t>(width - drawn), ' ') << "| " << fixed(b.total, 1) << " ms\n";
    }
}

std::string times(double ratio) { return std::isfinite(ratio) ? fixed(ratio, 2) + "x" : "-"; }

// Median over the rounds of a[i] / b[i]: the two steps of a round ran seconds apart, under the same load.
double paired_ratio(const std::vector<double> &a, const std::vector<double> &b) {
    std::vector<double> r;
    for (size_t i = 0; i < std::min(a.size(), b.size()); i++) r.push_back(a[i] / b[i]);
    return r.empty() ? NAN : median(r);
}

}  // namespace

void print_step_timings(const lm::StepTimings &t, const std::string &path, const std::string &paper_csv, std::ostream &os) {
    std::vector<lm::PaperBar> paper;
    if (!paper_csv.empty() && std::filesystem::exists(paper_csv)) paper = lm::read_paper_fig4_left(paper_csv);
    auto paper_bar = [&](const std::string &model) -> const lm::PaperBar * {
        const std::string name = lm::paper_counterpart(model);
        for (auto &b : paper)
            if (b.model == name) return &b;
        return nullptr;
    };

    const std::string config = attr_text(t.attrs, "config");
    os << path << ": training steps timed side by side, " << attr_text(t.attrs, "cpu_model") << " (" << attr_text(t.attrs, "cores")
       << " cores), target " << attr_text(t.attrs, "target") << "\n"
       << "model: " << config_value(config, "layers") << " x " << config_value(config, "hidden") << ", embedding "
       << config_value(config, "emb") << ", batch " << config_value(config, "batch") << " x bptt " << config_value(config, "bptt")
       << ", vocabulary " << attr_text(t.attrs, "vocab") << " (" << attr_text(t.attrs, "vocab_file") << " words from "
       << config_value(config, "train") << "); QRNN pooling " << config_value(config, "pooling") << ", k=" << config_value(config, "window")
       << ", zoneout " << config_value(config, "zoneout") << "; dropout " << config_value(config, "dropout") << ", io_dropout "
       << config_value(config, "io_dropout") << ", clip " << config_value(config, "clip") << ", weight_decay "
       << config_value(config, "weight_decay") << "\n"
       << "medians of " << attr_text(t.attrs, "batches") << " timed batches per model after " << attr_text(t.attrs, "warmup")
       << " warm-up rounds, one step of every model per round (order rotated)\n";
    if (attr_text(t.attrs, "environment") != "-" && !attr_text(t.attrs, "environment").empty())
        os << "environment: " << attr_text(t.attrs, "environment") << "\n";

    std::vector<Bar> ours;
    Table table({"model", "parameters", "rnn", "softmax", "optim", "other", "total", "optim %", "|", "paper (GPU)", "rnn",
                 "softmax", "optim", "total", "optim %"});
    for (auto &m : t.models) {
        Bar b{m.model, {median(m.rnn_ms), median(m.softmax_ms), median(m.optim_ms), median(m.other_ms)}, median(m.total_ms)};
        ours.push_back(b);
        std::vector<std::string> row{m.model,
                                     std::to_string(m.parameters),
                                     fixed(b.parts[0], 1),
                                     fixed(b.parts[1], 1),
                                     fixed(b.parts[2], 1),
                                     fixed(b.parts[3], 1),
                                     fixed(b.total, 1),
                                     fixed(100 * b.parts[2] / b.total, 1),
                                     "|"};
        if (const lm::PaperBar *p = paper_bar(m.model))
            row.insert(row.end(), {p->model, fixed(p->rnn_ms, 0), fixed(p->softmax_ms, 0), fixed(p->optim_ms, 0),
                                   fixed(p->total_ms, 0), fixed(100 * p->optim_ms / p->total_ms, 1)});
        else row.insert(row.end(), {"-", "", "", "", "", ""});
        table.add(row);
    }
    os << "\nper-batch time, ms (median; rnn = embedding + stack + dropouts and softmax = decoder + loss, each forward + "
          "backward;\noptim = clipping, L2, SGD; other = zeroing the gradients; ours on this CPU, the paper's on its GPU):\n";
    table.print(os);

    std::vector<Bar> theirs;
    for (auto &p : paper) theirs.push_back({p.model, {p.rnn_ms, p.softmax_ms, p.optim_ms, 0}, p.total_ms});
    size_t label_width = 0;
    for (auto *group : {&ours, &theirs})
        for (auto &b : *group) label_width = std::max(label_width, b.label.size());
    os << "\nstacked bars (r rnn, s softmax, o optimization, . other; each group scaled to its longest bar):\n";
    print_bars("ours (CPU, ms):", ours, 60, label_width, os);
    if (!theirs.empty()) print_bars("paper (Bradbury et al. 2016, Fig. 4 left; GPU, ms):", theirs, 60, label_width, os);

    // Ratios to the QRNN, the paper's and ours: absolute times differ (CPU vs GPU), ratios compare.
    const Bar *q = nullptr;
    for (auto &b : ours)
        if (b.label == "qrnn") q = &b;
    const lm::PaperBar *pq = paper_bar("qrnn");
    if (!q) {
        os << "\n(no qrnn model timed: no ratios to the QRNN)\n";
        return;
    }
    const lm::ModelStepTimes &qt = t.models[static_cast<size_t>(q - ours.data())];
    Table ratios({"model / qrnn", "rnn", "paper", "softmax", "paper", "optim", "paper", "step", "paper", "|", "rnn paired",
                  "step paired"});
    for (auto &b : ours) {
        if (&b == q) continue;
        const lm::ModelStepTimes &bt = t.models[static_cast<size_t>(&b - ours.data())];
        const lm::PaperBar *p = paper_bar(b.label);
        auto ratio_pair = [&](double mine, double qrnn, double their, double their_qrnn) {
            return std::vector<std::string>{times(mine / qrnn), p && pq ? times(their / their_qrnn) : "-"};
        };
        std::vector<std::string> row{b.label};
        for (auto &cells : {ratio_pair(b.parts[0], q->parts[0], p ? p->rnn_ms : NAN, pq ? pq->rnn_ms : NAN),
                            ratio_pair(b.parts[1], q->parts[1], p ? p->softmax_ms : NAN, pq ? pq->softmax_ms : NAN),
                            ratio_pair(b.parts[2], q->parts[2], p ? p->optim_ms : NAN, pq ? pq->optim_ms : NAN),
                            ratio_pair(b.total, q->total, p ? p->total_ms : NAN, pq ? pq->total_ms : NAN)})
            row.insert(row.end(), cells.begin(), cells.end());
        row.insert(row.end(), {"|", times(paired_ratio(bt.rnn_ms, qt.rnn_ms)), times(paired_ratio(bt.total_ms, qt.total_ms))});
        ratios.add(row);
    }
    os << "\nratios to the QRNN (its time = 1): ours (of the medians) beside the paper's; paired = median over the rounds "
          "of\nthe per-round ratio (both steps ran seconds apart, under the same load):\n";
    ratios.print(os);

    // The targets (timing is reported, never a pass/fail of a test).
    const Bar *lstm = nullptr;
    for (auto &b : ours)
        if (b.label == "lstm-onednn") lstm = &b;
    os << "\ntargets:";
    if (lstm) {
        const double rnn = lstm->parts[0] / q->parts[0], step = lstm->total / q->total;
        os << " qrnn rnn " << times(rnn) << " faster than lstm-onednn (target >= 2x: " << (rnn >= 2 ? "met" : "missed")
           << "); whole step " << times(step) << " (target >= 1.3x: " << (step >= 1.3 ? "met" : "missed") << ");";
    }
    double worst = 0;
    for (auto &b : ours) worst = std::max(worst, b.parts[2] / b.total);
    os << " optimizer at most " << fixed(100 * worst, 1) << "% of a step (target <= 10%: " << (worst <= 0.10 ? "met" : "missed")
       << ")\n";
}

}  // namespace qrnn::cli
