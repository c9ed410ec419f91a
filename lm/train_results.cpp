#include "lm/train_results.h"

#include "core/error.h"
#include "lm/h5io.h"
#include "runtime/atomic_file.h"

namespace qrnn::lm {
namespace {
constexpr const char *kFormat = "qrnn-lm-results", *kWhat = "training results file";
}

void write_train_results(const std::string &path, const TrainResults &results) {
    write_hdf5_atomically(path, kWhat, [&](H5::H5File &file) {
        h5::write_attr(file, "format", std::string(kFormat));
        for (auto &[name, value] : results.attrs) std::visit([&](auto &v) { h5::write_attr(file, name, v); }, value);
        write_epochs(file, "/epochs", results.epochs);
    });
}

bool is_train_results(const std::string &path) {
    try {
        H5::H5File file = open_hdf5_for_reading(path, kWhat);
        h5::require_format(file, path, kFormat, kWhat);
        return true;
    } catch (const std::exception &) {
        return false;
    }
}

TrainResults read_train_results(const std::string &path) {
    H5::H5File file = open_hdf5_for_reading(path, kWhat);
    TrainResults r;
    try {
        h5::require_format(file, path, kFormat, kWhat);
        for (int i = 0; i < file.getNumAttrs(); i++) {
            H5::Attribute a = file.openAttribute(static_cast<unsigned>(i));
            const std::string name = a.getName();
            if (a.getTypeClass() == H5T_STRING) r.attrs[name] = h5::read_string(file, path, name);
            else if (a.getTypeClass() == H5T_INTEGER) r.attrs[name] = h5::read_int(file, path, name);
            else r.attrs[name] = h5::read_double(file, path, name);
        }
        r.epochs = read_epochs(file, path, "/epochs");
    } catch (const H5::Exception &e) {
        fail(path, ": malformed ", kWhat, " (", e.getDetailMsg(), ")");
    }
    return r;
}

}  // namespace qrnn::lm
