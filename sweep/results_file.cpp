#include "sweep/results_file.h"

#include <H5Cpp.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "core/error.h"
#include "runtime/atomic_file.h"
#include "runtime/h5io.h"

namespace qrnn::sweep {
namespace {

H5::StrType utf8_string() {
    H5::StrType type(H5::PredType::C_S1, H5T_VARIABLE);
    type.setCset(H5T_CSET_UTF8);
    return type;
}

void write_attr(H5::H5Object &obj, const std::string &name, const Value &value) {
    std::visit([&](const auto &v) { h5::write_attr(obj, name, v); }, value);
}

Value read_attr(const H5::Attribute &attr) {
    switch (attr.getTypeClass()) {
        case H5T_STRING: {
            std::string s;
            attr.read(attr.getDataType(), s);
            return s;
        }
        case H5T_INTEGER: {
            int64_t i = 0;
            attr.read(H5::PredType::NATIVE_INT64, &i);
            return i;
        }
        default: {
            double d = 0;
            attr.read(H5::PredType::NATIVE_DOUBLE, &d);
            return d;
        }
    }
}

void write_column(H5::Group &group, const Column &c) {
    hsize_t n = c.size();
    H5::DataSpace space(1, &n);
    if (c.kind == ColumnKind::Str) {
        H5::StrType type = utf8_string();
        H5::DataSet ds = group.createDataSet(c.name, type, space);
        std::vector<const char *> ptrs;
        for (auto &s : c.strs) ptrs.push_back(s.c_str());
        if (n) ds.write(ptrs.data(), type);
    } else if (c.kind == ColumnKind::Int) {
        H5::DataSet ds = group.createDataSet(c.name, H5::PredType::STD_I64LE, space);
        if (n) ds.write(c.ints.data(), H5::PredType::NATIVE_INT64);
    } else {
        H5::DataSet ds = group.createDataSet(c.name, H5::PredType::IEEE_F64LE, space);
        if (n) ds.write(c.floats.data(), H5::PredType::NATIVE_DOUBLE);
    }
}

Column read_column(const std::string &path, H5::Group &group, const std::string &name) {
    H5::DataSet ds = group.openDataSet(name);
    H5::DataSpace space = ds.getSpace();
    if (space.getSimpleExtentNdims() != 1) fail(path, ": /runs/", name, " is not a 1-D column");
    hsize_t n = 0;
    space.getSimpleExtentDims(&n);
    Column c{name, ColumnKind::Float, {}, {}, {}};
    switch (ds.getTypeClass()) {
        case H5T_STRING: {
            c.kind = ColumnKind::Str;
            H5::StrType type = utf8_string();
            if (!ds.getStrType().isVariableStr()) fail(path, ": /runs/", name, " holds fixed-length strings (expected variable-length)");
            std::vector<char *> buf(n, nullptr);
            if (n) ds.read(buf.data(), type);
            for (char *p : buf) c.strs.emplace_back(p ? p : "");
            if (n) H5::DataSet::vlenReclaim(buf.data(), type, space);
            break;
        }
        case H5T_INTEGER:
            c.kind = ColumnKind::Int;
            c.ints.resize(n);
            if (n) ds.read(c.ints.data(), H5::PredType::NATIVE_INT64);
            break;
        case H5T_FLOAT:
            c.floats.resize(n);
            if (n) ds.read(c.floats.data(), H5::PredType::NATIVE_DOUBLE);
            break;
        default: fail(path, ": /runs/", name, " has an unsupported type");
    }
    return c;
}

void push_default(Column &c) {
    if (c.kind == ColumnKind::Int) c.ints.push_back(0);
    else if (c.kind == ColumnKind::Float) c.floats.push_back(kNaN);
    else c.strs.emplace_back();
}

void push_value(Column &c, const Value &v) {
    if (c.kind == ColumnKind::Int) {
        if (auto i = std::get_if<int64_t>(&v)) return c.ints.push_back(*i);
    } else if (c.kind == ColumnKind::Float) {
        if (auto d = std::get_if<double>(&v)) return c.floats.push_back(*d);
        if (auto i = std::get_if<int64_t>(&v)) return c.floats.push_back(static_cast<double>(*i));
    } else if (auto s = std::get_if<std::string>(&v)) {
        return c.strs.push_back(*s);
    }
    fail("results column '", c.name, "': value '", value_str(v), "' has the wrong type");
}

ColumnKind kind_of(const Value &v) {
    if (std::holds_alternative<int64_t>(v)) return ColumnKind::Int;
    if (std::holds_alternative<double>(v)) return ColumnKind::Float;
    return ColumnKind::Str;
}

}  // namespace

size_t Column::size() const {
    return kind == ColumnKind::Int ? ints.size() : kind == ColumnKind::Float ? floats.size() : strs.size();
}

const Column *ResultTable::find(const std::string &name) const {
    for (auto &c : columns_)
        if (c.name == name) return &c;
    return nullptr;
}

void ResultTable::add_column(const std::string &name, ColumnKind kind) {
    if (find(name)) return;
    size_t n = rows();
    columns_.push_back({name, kind, {}, {}, {}});
    for (size_t i = 0; i < n; i++) push_default(columns_.back());
}

void ResultTable::append(const std::map<std::string, Value> &row) {
    for (auto &[name, value] : row) add_column(name, kind_of(value));
    for (auto &c : columns_) {
        auto it = row.find(c.name);
        if (it == row.end()) push_default(c);
        else push_value(c, it->second);
    }
}

std::map<std::string, Value> ResultTable::row(size_t i) const {
    std::map<std::string, Value> r;
    for (auto &c : columns_) {
        if (c.kind == ColumnKind::Int) r[c.name] = c.ints.at(i);
        else if (c.kind == ColumnKind::Float) r[c.name] = c.floats.at(i);
        else r[c.name] = c.strs.at(i);
    }
    return r;
}

void ResultTable::erase(size_t i) {
    for (auto &c : columns_) {
        if (c.kind == ColumnKind::Int) c.ints.erase(c.ints.begin() + i);
        else if (c.kind == ColumnKind::Float) c.floats.erase(c.floats.begin() + i);
        else c.strs.erase(c.strs.begin() + i);
    }
}

std::string ResultTable::str(size_t i, const std::string &column) const {
    const Column *c = find(column);
    if (!c) return "";
    if (c->kind == ColumnKind::Str) return c->strs.at(i);
    return c->kind == ColumnKind::Int ? std::to_string(c->ints.at(i)) : value_str(c->floats.at(i));
}

double ResultTable::num(size_t i, const std::string &column) const {
    const Column *c = find(column);
    if (!c || c->kind == ColumnKind::Str) return kNaN;
    return c->kind == ColumnKind::Int ? static_cast<double>(c->ints.at(i)) : c->floats.at(i);
}

int64_t ResultTable::index_of(const std::string &run_id) const {
    const Column *c = find("run_id");
    if (!c) return -1;
    for (size_t i = 0; i < c->strs.size(); i++)
        if (c->strs[i] == run_id) return static_cast<int64_t>(i);
    return -1;
}

std::vector<std::pair<std::string, ColumnKind>> result_schema() {
    std::vector<std::pair<std::string, ColumnKind>> s{
        {"run_id", ColumnKind::Str}, {"sweep", ColumnKind::Str}, {"index", ColumnKind::Int}, {"replicate", ColumnKind::Int}};
    for (auto &f : run_fields())
        s.emplace_back(f.name, f.kind == FieldKind::Float ? ColumnKind::Float
                               : f.kind == FieldKind::Str ? ColumnKind::Str
                                                          : ColumnKind::Int);
    for (const char *name : {"knobs", "status", "error"}) s.emplace_back(name, ColumnKind::Str);
    s.emplace_back("attempts", ColumnKind::Int);
    s.emplace_back("interleaved", ColumnKind::Int);  // runs measured side by side with this one, itself included
    for (const char *name : {"median_ms", "min_ms", "max_ms", "gflops", "max_abs_err", "max_rel_err"})
        s.emplace_back(name, ColumnKind::Float);
    for (const char *name : {"host", "started_utc", "finished_utc"}) s.emplace_back(name, ColumnKind::Str);
    return s;
}

ResultTable read_results(const std::string &path) {
    H5::H5File file = open_hdf5_for_reading(path, "a sweep results file");
    try {
        ResultTable t;
        for (int i = 0; i < file.getNumAttrs(); i++) {
            H5::Attribute a = file.openAttribute(static_cast<unsigned>(i));
            t.attrs[a.getName()] = read_attr(a);
        }
        auto format = t.attrs.find("format");
        if (format == t.attrs.end() || value_str(format->second) != kResultsFormat)
            fail(path, ": not a sweep results file (attribute format != ", kResultsFormat, ")");
        if (!file.nameExists("/runs")) fail(path, ": group /runs is missing");
        H5::Group runs = file.openGroup("/runs");
        std::vector<std::string> names;
        if (runs.attrExists("columns")) {
            std::string list = value_str(read_attr(runs.openAttribute("columns")));
            for (size_t start = 0; start <= list.size();) {
                size_t comma = std::min(list.find(',', start), list.size());
                if (comma > start) names.push_back(list.substr(start, comma - start));
                start = comma + 1;
            }
        } else {
            for (hsize_t i = 0; i < runs.getNumObjs(); i++) names.push_back(runs.getObjnameByIdx(i));
        }
        std::vector<Column> columns;
        for (auto &name : names) {
            if (!runs.nameExists(name)) fail(path, ": column /runs/", name, " is missing");
            columns.push_back(read_column(path, runs, name));
            if (columns.back().size() != columns.front().size())
                fail(path, ": column /runs/", name, " has ", columns.back().size(), " rows, /runs/", names.front(), " has ",
                     columns.front().size());
        }
        for (auto &c : columns) t.add_column(c.name, c.kind);
        for (size_t i = 0; i < (columns.empty() ? 0 : columns.front().size()); i++) {
            std::map<std::string, Value> row;
            for (auto &c : columns) {
                if (c.kind == ColumnKind::Int) row[c.name] = c.ints[i];
                else if (c.kind == ColumnKind::Float) row[c.name] = c.floats[i];
                else row[c.name] = c.strs[i];
            }
            t.append(row);
        }
        return t;
    } catch (const H5::Exception &e) {
        fail(path, ": cannot read results: ", e.getDetailMsg());
    }
}

void write_results(const std::string &path, const ResultTable &table) {
    write_hdf5_atomically(path, "results", [&](H5::H5File &file) {
        for (auto &[name, value] : table.attrs) write_attr(file, name, value);
        H5::Group runs = file.createGroup("/runs");
        std::string names;
        for (auto &c : table.columns()) {
            write_column(runs, c);
            names += (names.empty() ? "" : ",") + c.name;
        }
        write_attr(runs, "columns", names);
        write_attr(runs, "rows", static_cast<int64_t>(table.rows()));
    });
}

}  // namespace qrnn::sweep
