#include "runtime/h5io.h"

#include <cmath>
#include <cstdio>

#include "core/error.h"

namespace qrnn::h5 {
namespace {

constexpr const char *kChecksumAttr = "fnv1a64";

H5::DataSet open(H5::H5File &h5, const std::string &file, const std::string &path) {
    if (!h5.nameExists(path)) fail(file, ": dataset ", path, " is missing");
    return h5.openDataSet(path);
}

std::vector<hsize_t> dims_of(const H5::DataSet &ds) {
    H5::DataSpace space = ds.getSpace();
    std::vector<hsize_t> dims(static_cast<size_t>(space.getSimpleExtentNdims()));
    space.getSimpleExtentDims(dims.data());
    return dims;
}

H5::Attribute attr(H5::H5Object &obj, const std::string &file, const std::string &name) {
    if (!obj.attrExists(name)) fail(file, ": attribute ", name, " is missing");
    return obj.openAttribute(name);
}

template <class T>
void write_array(H5::H5File &file, const std::string &path, const std::vector<hsize_t> &dims, const H5::PredType &type,
                 const T *data) {
    ensure_groups(file, path);
    H5::DataSpace space(static_cast<int>(dims.size()), dims.data());
    file.createDataSet(path, type, space).write(data, type);
}

}  // namespace

void ensure_groups(H5::H5File &file, const std::string &path) {
    for (size_t at = path.find('/', 1); at != std::string::npos; at = path.find('/', at + 1)) {
        const std::string group = path.substr(0, at);
        if (!file.nameExists(group)) file.createGroup(group);
    }
}

void write_tensor(H5::H5File &file, const std::string &path, const Tensor<float> &t) {
    write_array(file, path, std::vector<hsize_t>(t.shape.begin(), t.shape.end()), H5::PredType::NATIVE_FLOAT, t.data.data());
}

void write_series(H5::H5File &file, const std::string &path, const std::vector<double> &v) {
    write_array(file, path, {v.size()}, H5::PredType::NATIVE_DOUBLE, v.data());
}

void write_bytes(H5::H5File &file, const std::string &path, const std::string &bytes) {
    write_array(file, path, {bytes.size()}, H5::PredType::NATIVE_UINT8, bytes.data());
}

void write_attr(H5::H5Object &obj, const std::string &name, double v) {
    obj.createAttribute(name, H5::PredType::NATIVE_DOUBLE, H5::DataSpace(H5S_SCALAR)).write(H5::PredType::NATIVE_DOUBLE, &v);
}

void write_attr(H5::H5Object &obj, const std::string &name, int64_t v) {
    obj.createAttribute(name, H5::PredType::NATIVE_INT64, H5::DataSpace(H5S_SCALAR)).write(H5::PredType::NATIVE_INT64, &v);
}

void write_attr(H5::H5Object &obj, const std::string &name, const std::string &v) {
    H5::StrType type(H5::PredType::C_S1, H5T_VARIABLE);
    type.setCset(H5T_CSET_UTF8);
    const char *p = v.c_str();
    obj.createAttribute(name, type, H5::DataSpace(H5S_SCALAR)).write(type, &p);
}

Tensor<float> read_tensor(H5::H5File &h5, const std::string &file, const std::string &path) {
    H5::DataSet ds = open(h5, file, path);
    if (ds.getTypeClass() != H5T_FLOAT) fail(file, ": dataset ", path, " is not floating point");
    std::vector<hsize_t> dims = dims_of(ds);
    Tensor<float> t(std::vector<int64_t>(dims.begin(), dims.end()));
    ds.read(t.data.data(), H5::PredType::NATIVE_FLOAT);
    return t;
}

void read_tensor_into(H5::H5File &h5, const std::string &file, const std::string &path, Tensor<float> &into) {
    Tensor<float> t = read_tensor(h5, file, path);
    if (t.shape != into.shape) fail(file, ": dataset ", path, " has shape ", t.shape_str(), ", the model's is ", into.shape_str());
    into = std::move(t);
}

std::string fnv1a64_hex(const Tensor<float> &t) {
    uint64_t hash = 14695981039346656037ull;
    const auto *bytes = reinterpret_cast<const unsigned char *>(t.data.data());
    for (size_t i = 0; i < t.data.size() * sizeof(float); i++) hash = (hash ^ bytes[i]) * 1099511628211ull;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
    return hex;
}

void write_checked_tensor(H5::H5File &file, const std::string &path, const Tensor<float> &t) {
    write_tensor(file, path, t);
    H5::DataSet ds = file.openDataSet(path);
    write_attr(ds, kChecksumAttr, fnv1a64_hex(t));
}

void mark_checksummed(H5::H5File &file) {
    write_attr(file, "checksums", std::string(kChecksumAttr) + " of every float tensor's bytes, on its dataset");
}

bool is_checksummed(H5::H5File &file) {
    // Every checkpoint of format_version 2 (PyTorch's conventions, lm/convention.h) is written with checksums: a
    // deleted `checksums` attribute must not turn their check off.
    return file.attrExists("checksums") ||
           (file.attrExists("format_version") && read_int(file, file.getFileName(), "format_version") >= 2);
}

void read_checked_tensor_into(H5::H5File &h5, const std::string &file, const std::string &path, Tensor<float> &into,
                              bool require_checksum) {
    read_tensor_into(h5, file, path, into);
    H5::DataSet ds = h5.openDataSet(path);
    if (require_checksum && !ds.attrExists(kChecksumAttr))
        fail(file, ": dataset ", path, " has no checksum (attribute ", kChecksumAttr, ")");
    const std::string stored = ds.attrExists(kChecksumAttr) ? read_string(ds, file, kChecksumAttr) : "",
                      actual = fnv1a64_hex(into);
    if (!stored.empty() && stored != actual)
        fail(file, ": dataset ", path, ": checksum mismatch (", kChecksumAttr, " ", stored, " stored, ", actual,
             " of the data): the file is corrupt");
    for (size_t i = 0; i < into.data.size(); i++)
        if (!std::isfinite(into.data[i]))
            fail(file, ": dataset ", path, " holds a non-finite value (", into.data[i], " at element ", i, ")");
}

std::vector<double> read_series(H5::H5File &h5, const std::string &file, const std::string &path) {
    H5::DataSet ds = open(h5, file, path);
    std::vector<hsize_t> dims = dims_of(ds);
    if (dims.size() != 1) fail(file, ": dataset ", path, " is not 1-D");
    std::vector<double> v(dims[0]);
    ds.read(v.data(), H5::PredType::NATIVE_DOUBLE);
    return v;
}

std::string read_bytes(H5::H5File &h5, const std::string &file, const std::string &path) {
    H5::DataSet ds = open(h5, file, path);
    std::vector<hsize_t> dims = dims_of(ds);
    if (dims.size() != 1) fail(file, ": dataset ", path, " is not 1-D");
    std::string s(dims[0], '\0');
    ds.read(s.data(), H5::PredType::NATIVE_UINT8);
    return s;
}

double read_double(H5::H5Object &obj, const std::string &file, const std::string &name) {
    double v = 0;
    attr(obj, file, name).read(H5::PredType::NATIVE_DOUBLE, &v);
    return v;
}

int64_t read_int(H5::H5Object &obj, const std::string &file, const std::string &name) {
    int64_t v = 0;
    attr(obj, file, name).read(H5::PredType::NATIVE_INT64, &v);
    return v;
}

std::string read_string(H5::H5Object &obj, const std::string &file, const std::string &name) {
    H5::Attribute a = attr(obj, file, name);
    if (a.getTypeClass() != H5T_STRING) fail(file, ": attribute ", name, " is not a string");
    std::string s;
    a.read(a.getDataType(), s);
    return s;
}

void require_format(H5::H5File &h5, const std::string &file, const std::string &format, const std::string &what) {
    if (!h5.attrExists("format") || read_string(h5, file, "format") != format)
        fail(file, ": not a ", what, " (attribute format is not ", format, ")");
}

void require_format_version(H5::H5File &h5, const std::string &file, const std::string &format, int64_t version,
                            const std::string &what) {
    require_format(h5, file, format, what);
    const int64_t found = read_int(h5, file, "format_version");
    if (found != version) fail(file, ": ", what, " format_version ", found, ", this build reads ", version);
}

}  // namespace qrnn::h5
