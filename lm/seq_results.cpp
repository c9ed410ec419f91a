#include "lm/seq_results.h"

#include "core/error.h"
#include "lm/h5io.h"
#include "runtime/atomic_file.h"

namespace qrnn::lm {
namespace {
constexpr const char *kFormat = "qrnn-seq-results", *kWhat = "sequence-task results file";
const std::vector<std::pair<const char *, std::vector<double> SeqHeatmap::*>> kTokenSeries{
    {"source", &SeqHeatmap::source}, {"output", &SeqHeatmap::output}, {"expected", &SeqHeatmap::expected}};
}  // namespace

const std::vector<std::pair<const char *, double SeqEpoch::*>> &seq_epoch_fields() {
    static const std::vector<std::pair<const char *, double SeqEpoch::*>> fields{
        {"step", &SeqEpoch::step},           {"seconds", &SeqEpoch::seconds}, {"train_loss", &SeqEpoch::train_loss},
        {"accuracy", &SeqEpoch::accuracy}, {"lr", &SeqEpoch::lr}};
    return fields;
}

void write_seq_results(const std::string &path, const SeqResults &results) {
    write_hdf5_atomically(path, kWhat, [&](H5::H5File &file) {
        h5::write_attr(file, "format", std::string(kFormat));
        for (auto &[name, value] : results.attrs) std::visit([&](auto &v) { h5::write_attr(file, name, v); }, value);
        for (auto &[name, member] : seq_epoch_fields()) {
            std::vector<double> series;
            for (auto &r : results.epochs) series.push_back(r.*member);
            h5::write_series(file, std::string("/epochs/") + name, series);
        }
        if (!results.heatmap) return;
        h5::write_tensor(file, "/heatmap/alpha", results.heatmap->alpha);
        for (auto &[name, member] : kTokenSeries) h5::write_series(file, std::string("/heatmap/") + name, (*results.heatmap).*member);
        H5::Group g = file.openGroup("/heatmap");
        h5::write_attr(g, "eos", results.heatmap->eos);
    });
}

bool is_seq_results(const std::string &path) {
    try {
        H5::H5File file = open_hdf5_for_reading(path, kWhat);
        return file.attrExists("format") && h5::read_string(file, path, "format") == kFormat;
    } catch (const std::exception &) {
        return false;
    }
}

SeqResults read_seq_results(const std::string &path) {
    H5::H5File file = open_hdf5_for_reading(path, kWhat);
    SeqResults r;
    try {
        if (!file.attrExists("format") || h5::read_string(file, path, "format") != kFormat)
            fail(path, ": not a ", kWhat, " (attribute format is not ", kFormat, ")");
        r.attrs = read_root_attrs(file, path);
        for (auto &[name, member] : seq_epoch_fields()) {
            std::vector<double> series = h5::read_series(file, path, std::string("/epochs/") + name);
            r.epochs.resize(series.size());
            for (size_t e = 0; e < series.size(); e++) r.epochs[e].*member = series[e];
        }
        if (file.nameExists("/heatmap")) {
            SeqHeatmap h;
            h.alpha = h5::read_tensor(file, path, "/heatmap/alpha");
            for (auto &[name, member] : kTokenSeries) h.*member = h5::read_series(file, path, std::string("/heatmap/") + name);
            H5::Group g = file.openGroup("/heatmap");
            h.eos = h5::read_int(g, path, "eos");
            r.heatmap = std::move(h);
        }
    } catch (const H5::Exception &e) {
        fail(path, ": malformed ", kWhat, " (", e.getDetailMsg(), ")");
    }
    return r;
}

}  // namespace qrnn::lm
