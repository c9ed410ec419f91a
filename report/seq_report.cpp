#include "report/seq_report.h"

#include <algorithm>
#include <cmath>

#include "tasks/seq_results.h"
#include "report/table.h"

namespace qrnn::cli {
namespace {

std::string attr(const lm::SeqResults &r, const std::string &name, int decimals = 4) {
    auto it = r.attrs.find(name);
    if (it == r.attrs.end()) return "-";
    if (auto s = std::get_if<std::string>(&it->second)) return *s;
    if (auto i = std::get_if<int64_t>(&it->second)) return std::to_string(*i);
    const double d = std::get<double>(it->second);
    return std::isnan(d) ? "-" : fixed(d, decimals);
}

std::string token(double t, int64_t eos) { return static_cast<int64_t>(t) == eos ? "$" : std::to_string(static_cast<int64_t>(t)); }

// Rows: the decoded tokens (EOS as $); columns: the source tokens; each cell alpha as a shade, darker = more.
void print_heatmap(const lm::SeqHeatmap &h, std::ostream &os) {
    static const std::string shades = " .:-=+*#%@";
    size_t width = 2;
    for (double t : h.source) width = std::max(width, token(t, h.eos).size() + 1);
    auto pad = [&](const std::string &s) { return std::string(width - std::min(width, s.size()), ' ') + s; };
    std::string expected;
    for (double t : h.expected) expected += " " + token(t, h.eos);
    os << "  expected output:" << expected << "\n" << pad("") << " |";
    for (double t : h.source) os << pad(token(t, h.eos));
    os << "   <- source\n";
    for (int64_t r = 0; r < h.alpha.dim(0); r++) {
        os << pad(r < static_cast<int64_t>(h.output.size()) ? token(h.output[r], h.eos) : "?") << " |";
        for (int64_t s = 0; s < h.alpha.dim(1); s++) {
            const double a = std::clamp(static_cast<double>(h.alpha(r, s)), 0.0, 1.0);
            os << std::string(width, shades[std::min<size_t>(shades.size() - 1, static_cast<size_t>(a * shades.size()))]);
        }
        os << "\n";
    }
    os << "  (rows: decoded tokens, $ = EOS; shade of alpha: '" << shades << "' from 0 to 1)\n";
}

}  // namespace

void print_seq_results(const std::vector<std::string> &paths, std::ostream &os) {
    std::vector<lm::SeqResults> runs;
    std::vector<std::string> header{"epoch"};
    size_t epochs = 0;
    for (size_t i = 0; i < paths.size(); i++) {
        runs.push_back(lm::read_seq_results(paths[i]));
        const lm::SeqResults &r = runs.back();
        const std::string metric = attr(r, "metric"), id = std::to_string(i + 1) + ":";
        os << id << " " << paths[i] << ": task " << attr(r, "task") << ", model " << attr(r, "model") << ", attention "
           << attr(r, "attention") << ", " << attr(r, "parameters") << " parameters (" << attr(r, "cpu_model") << ", "
           << attr(r, "cores") << " cores, load " << attr(r, "load_start", 1) << " -> " << attr(r, "load_end", 1) << ")\n"
           << "   final held-out " << metric << " " << attr(r, "final_accuracy") << " after " << attr(r, "steps") << " steps, "
           << attr(r, "seconds", 1) << " s; best " << attr(r, "best_accuracy") << "; chance " << attr(r, "chance", 2) << "\n";
        for (const char *c : {"step", "seconds", "train_loss"}) header.push_back(id + c);
        header.push_back(id + metric);
        epochs = std::max(epochs, r.epochs.size());
    }
    Table t(header);
    for (size_t e = 0; e < epochs; e++) {
        std::vector<std::string> row{std::to_string(e + 1)};
        for (auto &r : runs) {
            if (e >= r.epochs.size()) {
                row.insert(row.end(), 4, "");
                continue;
            }
            const lm::SeqEpoch &p = r.epochs[e];
            row.insert(row.end(), {fixed(p.step, 0), fixed(p.seconds, 1), fixed(p.train_loss, 4), fixed(p.accuracy, 4)});
        }
        t.add(row);
    }
    os << "\naccuracy curves (held-out, after each epoch; seconds since training began):\n";
    t.print(os);
    for (size_t i = 0; i < runs.size(); i++)
        if (runs[i].heatmap) {
            os << "\n" << i + 1 << ": attention heatmap of held-out example 0 (" << attr(runs[i], "task") << "):\n";
            print_heatmap(*runs[i].heatmap, os);
        }
}

}  // namespace qrnn::cli
