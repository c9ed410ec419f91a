// The step-timing results file (layout in lm/step_timing.h) and the paper's Fig. 4 left bars.
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "runtime/h5io.h"
#include "lm/step_timing.h"
#include "runtime/atomic_file.h"

namespace qrnn::lm {
namespace {
constexpr const char *kStepTimingFormat = "qrnn-lm-step-timing", *kStepTimingWhat = "step-timing results file";

std::vector<std::string> split(const std::string &text, char sep) {
    std::vector<std::string> out;
    std::stringstream ss(text);
    for (std::string cell; std::getline(ss, cell, sep);) out.push_back(cell);
    return out;
}
}  // namespace

void write_step_timings(const std::string &path, const StepTimings &t) {
    write_hdf5_atomically(path, kStepTimingWhat, [&](H5::H5File &file) {
        write_root_attrs(file, kStepTimingFormat, t.attrs);
        for (auto &m : t.models) {
            const std::string group = "/models/" + m.model;
            for (auto &[name, member] : step_time_parts()) h5::write_series(file, group + "/" + name, m.*member);
            H5::Group g = file.openGroup(group);
            h5::write_attr(g, "parameters", m.parameters);
        }
    });
}

bool is_step_timings(const std::string &path) { return has_results_format(path, kStepTimingFormat, kStepTimingWhat); }

StepTimings read_step_timings(const std::string &path) {
    StepTimings t;
    read_results_file(path, kStepTimingFormat, kStepTimingWhat, t.attrs, [&](H5::H5File &file) {
        const auto models = t.attrs.find("models");
        if (models == t.attrs.end() || !std::holds_alternative<std::string>(models->second))
            fail(path, ": attribute models is missing");
        for (const std::string &name : split(std::get<std::string>(models->second), ',')) {
            ModelStepTimes m;
            m.model = name;
            const std::string group = "/models/" + name;
            for (auto &[part, member] : step_time_parts()) m.*member = h5::read_series(file, path, group + "/" + part);
            if (m.total_ms.empty()) fail(path, ": ", group, " holds no timed batch");
            for (auto &[part, member] : step_time_parts())
                if ((m.*member).size() != m.total_ms.size()) fail(path, ": ", group, "/", part, " has another length than total_ms");
            H5::Group g = file.openGroup(group);
            m.parameters = h5::read_int(g, path, "parameters");
            t.models.push_back(std::move(m));
        }
    });
    return t;
}

std::vector<PaperBar> read_paper_fig4_left(const std::string &csv_path) {
    std::ifstream in(csv_path);
    if (!in) fail(csv_path, ": cannot read the paper's Fig. 4 left bars");
    const std::vector<std::string> header{"model", "rnn", "softmax", "optimization", "total"};
    std::vector<PaperBar> bars;
    bool seen_header = false;
    int line_no = 0;
    for (std::string line; std::getline(in, line);) {
        line_no++;
        if (line.empty() || line[0] == '#') continue;
        const std::vector<std::string> cells = split(line, ',');
        if (!seen_header) {
            if (cells != header) fail(csv_path, ":", line_no, ": expected the header model,rnn,softmax,optimization,total");
            seen_header = true;
            continue;
        }
        if (cells.size() != header.size()) fail(csv_path, ":", line_no, ": expected ", header.size(), " cells");
        PaperBar b;
        b.model = cells[0];
        double *values[] = {&b.rnn_ms, &b.softmax_ms, &b.optim_ms, &b.total_ms};
        for (size_t i = 0; i < 4; i++) {
            size_t used = 0;
            try {
                *values[i] = std::stod(cells[i + 1], &used);
            } catch (const std::exception &) {
                used = 0;
            }
            if (used == 0 || used != cells[i + 1].size() || !(*values[i] >= 0))
                fail(csv_path, ":", line_no, ": ", header[i + 1], " '", cells[i + 1], "' is not a time in ms");
        }
        bars.push_back(b);
    }
    if (bars.empty()) fail(csv_path, ": no bars (expected lines model,rnn,softmax,optimization,total)");
    return bars;
}

std::string default_paper_fig4_left_csv() {
    return std::string(QRNN_SWEEP_REPO_DIR) + "/experiments/paper/fig4_left_training_ms.csv";
}

std::string paper_counterpart(const std::string &model) {
    if (model == "qrnn") return "QRNN";
    if (model == "lstm-onednn") return "LSTM (cuDNN)";
    if (model == "lstm-halide") return "LSTM";
    return "";
}

}  // namespace qrnn::lm
