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
        write_attrs(file, results.attrs);
        for (auto &[name, member] : epoch_fields()) {
            std::vector<double> series;
            for (auto &r : results.epochs) series.push_back(r.*member);
            h5::write_series(file, std::string("/epochs/") + name, series);
        }
    });
}

void write_attrs(H5::H5Object &obj, const std::map<std::string, Attr> &attrs) {
    for (auto &[name, value] : attrs) std::visit([&](auto &v) { h5::write_attr(obj, name, v); }, value);
}

std::map<std::string, Attr> read_attrs(H5::H5Object &obj, const std::string &file) {
    std::map<std::string, Attr> attrs;
    for (int i = 0; i < obj.getNumAttrs(); i++) {
        H5::Attribute a = obj.openAttribute(static_cast<unsigned>(i));
        const std::string name = a.getName();
        if (a.getTypeClass() == H5T_STRING) attrs[name] = h5::read_string(obj, file, name);
        else if (a.getTypeClass() == H5T_INTEGER) attrs[name] = h5::read_int(obj, file, name);
        else attrs[name] = h5::read_double(obj, file, name);
    }
    return attrs;
}

bool has_format(const std::string &path, const std::string &format) {
    try {
        H5::H5File file = open_hdf5_for_reading(path, "results file");
        return file.attrExists("format") && h5::read_string(file, path, "format") == format;
    } catch (const std::exception &) {
        return false;
    }
}

void check_format(H5::H5File &file, const std::string &path, const std::string &format, const std::string &what) {
    if (!file.attrExists("format") || h5::read_string(file, path, "format") != format)
        fail(path, ": not a ", what, " (attribute format is not ", format, ")");
}

bool is_train_results(const std::string &path) { return has_format(path, kFormat); }

TrainResults read_train_results(const std::string &path) {
    H5::H5File file = open_hdf5_for_reading(path, kWhat);
    TrainResults r;
    try {
        check_format(file, path, kFormat, kWhat);
        r.attrs = read_attrs(file, path);
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
