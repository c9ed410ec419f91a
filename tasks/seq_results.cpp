#include "tasks/seq_results.h"

#include "core/error.h"
#include "runtime/atomic_file.h"

namespace qrnn::lm {
namespace {
constexpr const char *kSeqResultsFormat = "qrnn-seq-results", *kSeqResultsWhat = "sequence-task results file";
const std::vector<std::pair<const char *, std::vector<double> SeqHeatmap::*>> kTokenSeries{
    {"source", &SeqHeatmap::source}, {"output", &SeqHeatmap::output}, {"expected", &SeqHeatmap::expected}};
}  // namespace

const EpochFields<SeqEpoch> &seq_epoch_fields() {
    static const EpochFields<SeqEpoch> fields{
        {"step", &SeqEpoch::step},           {"seconds", &SeqEpoch::seconds}, {"train_loss", &SeqEpoch::train_loss},
        {"accuracy", &SeqEpoch::accuracy}, {"lr", &SeqEpoch::lr}};
    return fields;
}

void write_seq_results(const std::string &path, const SeqResults &results) {
    write_hdf5_atomically(path, kSeqResultsWhat, [&](H5::H5File &file) {
        write_root_attrs(file, kSeqResultsFormat, results.attrs);
        write_epochs(file, "/epochs", results.epochs, seq_epoch_fields());
        if (!results.heatmap) return;
        h5::write_tensor(file, "/heatmap/alpha", results.heatmap->alpha);
        for (auto &[name, member] : kTokenSeries) h5::write_series(file, std::string("/heatmap/") + name, (*results.heatmap).*member);
        H5::Group g = file.openGroup("/heatmap");
        h5::write_attr(g, "eos", results.heatmap->eos);
    });
}

bool is_seq_results(const std::string &path) { return has_results_format(path, kSeqResultsFormat, kSeqResultsWhat); }

SeqResults read_seq_results(const std::string &path) {
    SeqResults r;
    read_results_file(path, kSeqResultsFormat, kSeqResultsWhat, r.attrs, [&](H5::H5File &file) {
        r.epochs = read_epochs(file, path, "/epochs", seq_epoch_fields());
        if (file.nameExists("/heatmap")) {
            SeqHeatmap h;
            h.alpha = h5::read_tensor(file, path, "/heatmap/alpha");
            for (auto &[name, member] : kTokenSeries) h.*member = h5::read_series(file, path, std::string("/heatmap/") + name);
            H5::Group g = file.openGroup("/heatmap");
            h.eos = h5::read_int(g, path, "eos");
            r.heatmap = std::move(h);
        }
    });
    return r;
}

}  // namespace qrnn::lm
