#include "lm/train_results.h"

#include "core/error.h"
#include "runtime/h5io.h"
#include "runtime/atomic_file.h"

namespace qrnn::lm {
namespace {
constexpr const char *kTrainResultsFormat = "qrnn-lm-results", *kTrainResultsWhat = "training results file";
}

void write_train_results(const std::string &path, const TrainResults &results) {
    write_hdf5_atomically(path, kTrainResultsWhat, [&](H5::H5File &file) {
        write_root_attrs(file, kTrainResultsFormat, results.attrs);
        write_epochs(file, "/epochs", results.epochs);
    });
}

bool is_train_results(const std::string &path) { return has_results_format(path, kTrainResultsFormat, kTrainResultsWhat); }

bool has_results_format(const std::string &path, const char *format, const char *what) {
    try {
        H5::H5File file = open_hdf5_for_reading(path, what);
        h5::require_format(file, path, format, what);
        return true;
    } catch (const std::exception &) {
        return false;
    }
}

void write_root_attrs(H5::H5File &file, const char *format, const std::map<std::string, Attr> &attrs) {
    h5::write_attr(file, "format", std::string(format));
    for (auto &[name, value] : attrs) std::visit([&](auto &v) { h5::write_attr(file, name, v); }, value);
}

std::map<std::string, Attr> read_root_attrs(H5::H5File &file, const std::string &path) {
    std::map<std::string, Attr> attrs;
    for (int i = 0; i < file.getNumAttrs(); i++) {
        H5::Attribute a = file.openAttribute(static_cast<unsigned>(i));
        const std::string name = a.getName();
        if (a.getTypeClass() == H5T_STRING) attrs[name] = h5::read_string(file, path, name);
        else if (a.getTypeClass() == H5T_INTEGER) attrs[name] = h5::read_int(file, path, name);
        else attrs[name] = h5::read_double(file, path, name);
    }
    return attrs;
}

void read_results_file(const std::string &path, const char *format, const char *what, std::map<std::string, Attr> &attrs,
                       const std::function<void(H5::H5File &)> &read) {
    H5::H5File file = open_hdf5_for_reading(path, what);
    try {
        h5::require_format(file, path, format, what);
        attrs = read_root_attrs(file, path);
        read(file);
    } catch (const H5::Exception &e) {
        fail(path, ": malformed ", what, " (", e.getDetailMsg(), ")");
    }
}

TrainResults read_train_results(const std::string &path) {
    TrainResults r;
    read_results_file(path, kTrainResultsFormat, kTrainResultsWhat, r.attrs,
                      [&](H5::H5File &file) { r.epochs = read_epochs(file, path, "/epochs"); });
    return r;
}

}  // namespace qrnn::lm
