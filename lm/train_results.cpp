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
        for (auto &[name, member] : epoch_fields()) {
            std::vector<double> series;
            for (auto &r : results.epochs) series.push_back(r.*member);
            h5::write_series(file, std::string("/epochs/") + name, series);
        }
    });
}

bool is_train_results(const std::string &path) {
    try {
        H5::H5File file = open_hdf5_for_reading(path, kWhat);
        return file.attrExists("format") && h5::read_string(file, path, "format") == kFormat;
    } catch (const std::exception &) {
        return false;
    }
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

TrainResults read_train_results(const std::string &path) {
    H5::H5File file = open_hdf5_for_reading(path, kWhat);
    TrainResults r;
    try {
        if (!file.attrExists("format") || h5::read_string(file, path, "format") != kFormat)
            fail(path, ": not a ", kWhat, " (attribute format is not ", kFormat, ")");
        r.attrs = read_root_attrs(file, path);
        for (auto &[name, member] : epoch_fields()) {
            std::vector<double> series = h5::read_series(file, path, std::string("/epochs/") + name);
            r.epochs.resize(series.size());
            for (size_t e = 0; e < series.size(); e++) r.epochs[e].*member = series[e];
        }
    } catch (const H5::Exception &e) {
        fail(path, ": malformed ", kWhat, " (", e.getDetailMsg(), ")");
    }
    return r;
}

}  // namespace qrnn::lm
