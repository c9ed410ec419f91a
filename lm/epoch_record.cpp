#include "lm/epoch_record.h"

#include "runtime/h5io.h"

namespace qrnn::lm {

const EpochFields<EpochRecord> &epoch_fields() {
    static const EpochFields<EpochRecord> fields{
        {"train_ppl", &EpochRecord::train_ppl}, {"val_ppl", &EpochRecord::val_ppl},
        {"lr", &EpochRecord::lr},               {"seconds", &EpochRecord::seconds},
        {"tokens_per_s", &EpochRecord::tokens_per_s}, {"rnn_ms", &EpochRecord::rnn_ms},
        {"softmax_ms", &EpochRecord::softmax_ms},     {"optim_ms", &EpochRecord::optim_ms}};
    return fields;
}

void write_epochs(H5::H5File &file, const std::string &group, const std::vector<EpochRecord> &epochs) {
    write_epochs(file, group, epochs, epoch_fields());
}

std::vector<EpochRecord> read_epochs(H5::H5File &file, const std::string &path, const std::string &group) {
    return read_epochs(file, path, group, epoch_fields());
}

}  // namespace qrnn::lm
