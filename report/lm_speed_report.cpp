// `qrnn report` of step timings (`qrnn train-speed`): the paper's Fig. 4 left as text.
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "runtime/timing.h"
#include "report/lm_report.h"
#include "report/table.h"

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

// One model of one file, under the label the report shows.
struct Row {
    const lm::ModelStepTimes *times;
    size_t file;
    std::string label;
};

// What the parts of the report share: the rows, their bars (ours, in the rows' order) and the paper's bars.
struct StepReport {
    std::vector<Row> rows;
    std::vector<Bar> ours;
    std::vector<lm::PaperBar> paper;

    const lm::PaperBar *paper_bar(const std::string &model) const {
        const std::string name = lm::paper_counterpart(model);
        for (auto &b : paper)
            if (b.model == name) return &b;
        return nullptr;
    }
    const Bar &bar_of(const Row &r) const { return ours[static_cast<size_t>(&r - rows.data())]; }
    // The QRNN timed in `file`, if any.
    const Row *qrnn_of(size_t file) const {
        for (auto &r : rows)
            if (r.file == file && r.times->model == "qrnn") return &r;
        return nullptr;
    }
};

using TimingFiles = std::vector<std::pair<std::string, lm::StepTimings>>;

// Every model of every file in one list; a name already taken by an earlier file gets "#<file number>".
std::vector<Row> labelled_rows(const TimingFiles &files) {
    std::vector<Row> rows;
    for (size_t f = 0; f < files.size(); f++)
        for (auto &m : files[f].second.models) {
            std::string label = m.model;
            for (auto &r : rows)
                if (r.label == label) label = m.model + "#" + std::to_string(f + 1);
            rows.push_back({&m, f, label});
        }
    return rows;
}

const Row *first_qrnn(const std::vector<Row> &rows) {
    for (auto &r : rows)
        if (r.times->model == "qrnn") return &r;
    return nullptr;
}

bool has_environment(const lm::StepTimings &t) {
    return attr_text(t.attrs, "environment") != "-" && !attr_text(t.attrs, "environment").empty();
}

void print_first_file(const std::pair<std::string, lm::StepTimings> &file, std::ostream &os) {
    const lm::StepTimings &t = file.second;
    const std::string config = attr_text(t.attrs, "config");
    os << file.first << ": training steps timed side by side, " << attr_text(t.attrs, "cpu_model") << " ("
       << attr_text(t.attrs, "cores") << " cores), target " << attr_text(t.attrs, "target") << "\n"
       << "model: " << config_value(config, "layers") << " x " << config_value(config, "hidden") << ", embedding "
       << config_value(config, "emb") << ", batch " << config_value(config, "batch") << " x bptt " << config_value(config, "bptt")
       << ", vocabulary " << attr_text(t.attrs, "vocab") << " (" << attr_text(t.attrs, "vocab_file") << " words from "
       << config_value(config, "train") << "); QRNN pooling " << config_value(config, "pooling") << ", k=" << config_value(config, "window")
       << ", zoneout " << config_value(config, "zoneout") << "; dropout " << config_value(config, "dropout") << ", io_dropout "
       << config_value(config, "io_dropout") << ", clip " << config_value(config, "clip") << ", weight_decay "
       << config_value(config, "weight_decay") << "\n"
       << "medians of " << attr_text(t.attrs, "batches") << " timed batches per model after " << attr_text(t.attrs, "warmup")
       << " warm-up rounds, one step of every model per round (order rotated)\n";
    if (has_environment(t)) os << "environment: " << attr_text(t.attrs, "environment") << "\n";
}

// What of file `o`'s configuration differs from the first file's `t` ("" when nothing).
std::string configuration_difference(const lm::StepTimings &o, const lm::StepTimings &t) {
    const std::string config = attr_text(t.attrs, "config"), oc = attr_text(o.attrs, "config");
    std::string differ;
    for (const char *key : {"layers", "hidden", "emb", "batch", "bptt", "window", "zoneout", "dropout", "io_dropout"})
        if (config_value(oc, key) != config_value(config, key))
            differ += std::string(differ.empty() ? "" : ", ") + key + " " + config_value(oc, key);
    if (attr_text(o.attrs, "vocab") != attr_text(t.attrs, "vocab"))
        differ += (differ.empty() ? "" : ", ") + std::string("vocab ") + attr_text(o.attrs, "vocab");
    if (attr_text(o.attrs, "cpu_model") != attr_text(t.attrs, "cpu_model"))
        differ += (differ.empty() ? "" : ", ") + std::string("another CPU");
    return differ;
}

// A line per further file (a separate run): its models, CPU and counts, and a warning if its configuration differs.
void print_further_files(const TimingFiles &files, const std::vector<Row> &rows, std::ostream &os) {
    for (size_t f = 1; f < files.size(); f++) {
        const lm::StepTimings &o = files[f].second;
        std::string labels;
        for (auto &r : rows)
            if (r.file == f) labels += (labels.empty() ? "" : ", ") + r.label;
        os << "with " << files[f].first << " (a separate run): " << labels << "; " << attr_text(o.attrs, "cpu_model") << " ("
           << attr_text(o.attrs, "cores") << " cores), medians of " << attr_text(o.attrs, "batches") << " timed batches after "
           << attr_text(o.attrs, "warmup") << " warm-up\n";
        if (has_environment(o)) os << "  environment: " << attr_text(o.attrs, "environment") << "\n";
        const std::string differ = configuration_difference(o, files.front().second);
        if (!differ.empty()) os << "  WARNING: another configuration than the first file's: " << differ << "\n";
    }
}

// The per-batch table, ours beside the paper's; fills report.ours.
void print_breakdown(StepReport &report, std::ostream &os) {
    Table table({"model", "parameters", "rnn", "softmax", "optim", "other", "total", "optim %", "|", "paper (GPU)", "rnn",
                 "softmax", "optim", "total", "optim %"});
    for (auto &r : report.rows) {
        const lm::ModelStepTimes &m = *r.times;
        Bar b{r.label, {median(m.rnn_ms), median(m.softmax_ms), median(m.optim_ms), median(m.other_ms)}, median(m.total_ms)};
        report.ours.push_back(b);
        std::vector<std::string> row{r.label,
                                     std::to_string(m.parameters),
                                     fixed(b.parts[0], 1),
                                     fixed(b.parts[1], 1),
                                     fixed(b.parts[2], 1),
                                     fixed(b.parts[3], 1),
                                     fixed(b.total, 1),
                                     fixed(100 * b.parts[2] / b.total, 1),
                                     "|"};
        if (const lm::PaperBar *p = report.paper_bar(m.model))
            row.insert(row.end(), {p->model, fixed(p->rnn_ms, 0), fixed(p->softmax_ms, 0), fixed(p->optim_ms, 0),
                                   fixed(p->total_ms, 0), fixed(100 * p->optim_ms / p->total_ms, 1)});
        else row.insert(row.end(), {"-", "", "", "", "", ""});
        table.add(row);
    }
    os << "\nper-batch time, ms (median; rnn = embedding + stack + dropouts and softmax = decoder + loss, each forward + "
          "backward;\noptim = clipping, L2, SGD; other = zeroing the gradients; ours on this CPU, the paper's on its GPU):\n";
    table.print(os);
}

void print_stacked_bars(const StepReport &report, std::ostream &os) {
    std::vector<Bar> theirs;
    for (auto &p : report.paper) theirs.push_back({p.model, {p.rnn_ms, p.softmax_ms, p.optim_ms, 0}, p.total_ms});
    size_t label_width = 0;
    for (const std::vector<Bar> *group : {&report.ours, static_cast<const std::vector<Bar> *>(&theirs)})
        for (auto &b : *group) label_width = std::max(label_width, b.label.size());
    os << "\nstacked bars (r rnn, s softmax, o optimization, . other; each group scaled to its longest bar):\n";
    print_bars("ours (CPU, ms):", report.ours, 60, label_width, os);
    if (!theirs.empty()) print_bars("paper (Bradbury et al. 2016, Fig. 4 left; GPU, ms):", theirs, 60, label_width, os);
}

// One row of the ratio table: r against its QRNN `ref` (paired when both ran in the same rounds).
std::vector<std::string> ratio_row(const StepReport &report, const Row &r, const Row &ref, bool same_run, bool several) {
    const Bar &b = report.bar_of(r), &qb = report.bar_of(ref);
    const lm::PaperBar *p = report.paper_bar(r.times->model), *pq = report.paper_bar("qrnn");
    auto ratio_pair = [&](double mine, double qrnn, double their, double their_qrnn) {
        return std::vector<std::string>{times(mine / qrnn), p && pq ? times(their / their_qrnn) : "-"};
    };
    std::vector<std::string> row{r.label};
    for (auto &cells : {ratio_pair(b.parts[0], qb.parts[0], p ? p->rnn_ms : NAN, pq ? pq->rnn_ms : NAN),
                        ratio_pair(b.parts[1], qb.parts[1], p ? p->softmax_ms : NAN, pq ? pq->softmax_ms : NAN),
                        ratio_pair(b.parts[2], qb.parts[2], p ? p->optim_ms : NAN, pq ? pq->optim_ms : NAN),
                        ratio_pair(b.total, qb.total, p ? p->total_ms : NAN, pq ? pq->total_ms : NAN)})
        row.insert(row.end(), cells.begin(), cells.end());
    if (same_run)
        row.insert(row.end(), {"|", times(paired_ratio(r.times->rnn_ms, ref.times->rnn_ms)),
                               times(paired_ratio(r.times->total_ms, ref.times->total_ms))});
    else row.insert(row.end(), {"|", "-", "-"});
    if (several) row.push_back(same_run ? "same run" : ref.label + ", separate run");
    return row;
}

// A baseline timed in a reduced precision (an entry "lstm-onednn@bf16") against the QRNN in the same precision, timed in
// the same run ("qrnn@bf16"): the comparison the ratio table above (against the f32 QRNN) leaves to division.
void print_same_precision_ratios(const StepReport &report, std::ostream &os) {
    for (auto &r : report.rows) {
        const std::string &model = r.times->model;
        const size_t at = model.find('@');
        if (at == std::string::npos || model.compare(0, at, "qrnn") == 0) continue;
        const std::string qrnn = "qrnn" + model.substr(at);
        for (auto &q : report.rows)
            if (q.file == r.file && q.times->model == qrnn)
                os << r.label << " / " << q.label << " (same run, same precision): step "
                   << times(report.bar_of(r).total / report.bar_of(q).total) << ", paired "
                   << times(paired_ratio(r.times->total_ms, q.times->total_ms)) << "; rnn paired "
                   << times(paired_ratio(r.times->rnn_ms, q.times->rnn_ms)) << "\n";
    }
}

// Ratios to the QRNN, the paper's and ours: absolute times differ (CPU vs GPU), ratios compare. Each row's QRNN is
// the one timed in the same run (file) when there is one - its steps ran in the same rounds, so the ratios are
// paired; otherwise the first file's QRNN `q`, and the ratio is one of medians of separate runs.
void print_ratios(const StepReport &report, const Row &q, bool several, std::ostream &os) {
    std::vector<std::string> header{"model / qrnn", "rnn", "paper", "softmax", "paper", "optim", "paper", "step", "paper", "|",
                                    "rnn paired", "step paired"};
    if (several) header.push_back("qrnn of");
    Table ratios(header);
    bool separate = false;
    for (auto &r : report.rows) {
        if (&r == &q) continue;
        const Row *own = report.qrnn_of(r.file);
        const bool same_run = own && own != &r;
        separate = separate || !same_run;
        ratios.add(ratio_row(report, r, same_run ? *own : q, same_run, several));
    }
    os << "\nratios to the QRNN (its time = 1): ours (of the medians) beside the paper's; paired = median over the rounds "
          "of\nthe per-round ratio (both steps ran seconds apart, under the same load)";
    if (several) os << "; each row's QRNN is the one of its own run (file) when it has one";
    os << ":\n";
    ratios.print(os);
    if (separate)
        os << "(rows marked '-' under paired: their ratios come from separate runs - medians taken at other times, under "
              "possibly\nother machine load; for a paired ratio time both in one run, e.g. experiments/anchors/pytorch_lm.py "
              "runs our QRNN\nin its rounds)\n";
    print_same_precision_ratios(report, os);
}

// Against PyTorch (experiments/anchors/pytorch_lm.py): our QRNN LM step vs the torch LMs'. A torch row timed in the
// same run as a QRNN (paired) is preferred to one of a separate run.
void print_torch_targets(const StepReport &report, const Row &q, std::ostream &os) {
    bool any = false;
    for (auto &[anchor, target] : {std::pair<const char *, double>{"torch-qrnn", 1.5}, {"torch-lstm", 4.0}}) {
        const Row *pick = nullptr;
        for (auto &r : report.rows)
            if (r.times->model == anchor && (!pick || (!report.qrnn_of(pick->file) && report.qrnn_of(r.file)))) pick = &r;
        if (!pick) continue;
        const Row *own = report.qrnn_of(pick->file);
        if (!any) os << "\n  against PyTorch (experiments/anchors/pytorch_lm.py):";
        any = true;
        const double step = own ? paired_ratio(pick->times->total_ms, own->times->total_ms)
                                : report.bar_of(*pick).total / report.bar_of(q).total;
        os << " " << (own ? own->label : q.label) << " LM step " << times(step) << " faster than " << pick->label
           << " (target >= " << fixed(target, 1) << "x: " << (step >= target ? "met" : "missed")
           << (own ? "; paired, same rounds" : "; medians of separate runs") << ");";
    }
    if (any) os << "\n ";
}

// The issue's targets (timing is reported, never a pass/fail of a test).
void print_targets(const StepReport &report, const Row &q, std::ostream &os) {
    const Bar *lstm = nullptr;
    for (auto &b : report.ours)
        if (b.label == "lstm-onednn") lstm = &b;
    const Bar &qbar = report.bar_of(q);
    os << "\ntargets:";
    if (lstm) {
        const double rnn = lstm->parts[0] / qbar.parts[0], step = lstm->total / qbar.total;
        os << " qrnn rnn " << times(rnn) << " faster than lstm-onednn (target >= 2x: " << (rnn >= 2 ? "met" : "missed")
           << "); whole step " << times(step) << " (target >= 1.3x: " << (step >= 1.3 ? "met" : "missed") << ");";
    }
    print_torch_targets(report, q, os);
    double worst = 0;
    for (auto &r : report.rows)
        if (r.times->model.rfind("torch-", 0) != 0) worst = std::max(worst, report.bar_of(r).parts[2] / report.bar_of(r).total);
    os << " optimizer at most " << fixed(100 * worst, 1) << "% of a step of ours (target <= 10%: " << (worst <= 0.10 ? "met" : "missed")
       << ")\n";
}


}  // namespace

void print_step_timings(const lm::StepTimings &t, const std::string &path, const std::string &paper_csv, std::ostream &os) {
    print_step_timings(std::vector<std::pair<std::string, lm::StepTimings>>{{path, t}}, paper_csv, os);
}

void print_step_timings(const std::vector<std::pair<std::string, lm::StepTimings>> &files, const std::string &paper_csv,
                        std::ostream &os) {
    if (files.empty()) return;
    StepReport report{labelled_rows(files), {}, {}};
    if (!paper_csv.empty() && std::filesystem::exists(paper_csv)) report.paper = lm::read_paper_fig4_left(paper_csv);
    print_first_file(files.front(), os);
    print_further_files(files, report.rows, os);
    print_breakdown(report, os);
    print_stacked_bars(report, os);
    const Row *q = first_qrnn(report.rows);
    if (!q) {
        os << "\n(no qrnn model timed: no ratios to the QRNN)\n";
        return;
    }
    print_ratios(report, *q, files.size() > 1, os);
    print_targets(report, *q, os);
}

}  // namespace qrnn::cli
