#include "lm/epoch_record.h"

#include "lm/h5io.h"

namespace qrnn::lm {

const std::vector<std::pair<const char *, double EpochRecord::*>> &epoch_fields() {
    static const std::vector<std::pair<const char *, double EpochRecord::*>> fields{
        {"train_ppl", &EpochRecord::train_ppl}, {"val_ppl", &EpochRecord::val_ppl},
        {"lr", &EpochRecord::lr},               {"seconds", &EpochRecord::seconds},
        {"tokens_per_s", &EpochRecord::tokens_per_s}, {"rnn_ms", &EpochRecord::rnn_ms},
        {"softmax_ms", &EpochRecord::softmax_ms},     {"optim_ms", &EpochRecord::optim_ms}};
    return fields;
}

void write_epochs(H5::H5File &file, const std::string &group, const std::vector<EpochRecord> &epochs) {
    for (auto &[name, member] : epoch_fields()) {
        std::vector<double> series;
        for (auto &r : epochs) series.push_back(r.*member);
        h5::write_series(file, group + "/" + name, series);
    }
}

std::vector<EpochRecord> read_epochs(H5::H5File &file, const std::string &path, const std::string &group) {
    std::vector<EpochRecord> epochs;
    for (auto &[name, member] : epoch_fields()) {
        const std::vector<double> series = h5::read_series(file, path, group + "/" + name);
        epochs.resize(series.size());
        for (size_t e = 0; e < series.size(); e++) epochs[e].*member = series[e];
    }
    return epochs;
}

}  // namespace qrnn::lm
