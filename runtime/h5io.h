// Small HDF5 helpers for every file qrnn writes (dumps, checkpoints, results): tensors, number series and attributes
// by path; readers throw qrnn::Error naming the file and the missing or mis-shaped object.
#pragma once
#include <H5Cpp.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/tensor.h"

namespace qrnn::h5 {

void ensure_groups(H5::H5File &file, const std::string &path);  // creates the parents of path
void write_tensor(H5::H5File &file, const std::string &path, const Tensor<float> &t);
void write_series(H5::H5File &file, const std::string &path, const std::vector<double> &v);
void write_bytes(H5::H5File &file, const std::string &path, const std::string &bytes);
void write_attr(H5::H5Object &obj, const std::string &name, double v);
void write_attr(H5::H5Object &obj, const std::string &name, int64_t v);
void write_attr(H5::H5Object &obj, const std::string &name, const std::string &v);

// `file` names the file in errors.
Tensor<float> read_tensor(H5::H5File &h5, const std::string &file, const std::string &path);
// read_tensor into `into`, whose shape the dataset must have ("<file>: dataset <path> has shape ..., the model's is ...").
void read_tensor_into(H5::H5File &h5, const std::string &file, const std::string &path, Tensor<float> &into);
// Tensors with a checksum: write_tensor plus attribute `fnv1a64` (FNV-1a 64 of the float bytes, 16 hex digits);
// read_tensor_into, then "<file>: dataset <path>: checksum mismatch (...): the file is corrupt" when the data do not
// match it (or, with require_checksum, it is missing), and "<file>: dataset <path> holds a non-finite value (inf at
// element 3)". A file whose tensors all have one says so with mark_checksummed (root attribute `checksums`);
// is_checksummed tells a reader to require them: the file says so, or is of format_version 2 or later (files from
// before checksums, version 1, load with the finiteness check alone).
void write_checked_tensor(H5::H5File &file, const std::string &path, const Tensor<float> &t);
void read_checked_tensor_into(H5::H5File &h5, const std::string &file, const std::string &path, Tensor<float> &into,
                              bool require_checksum);
void mark_checksummed(H5::H5File &file);
bool is_checksummed(H5::H5File &file);
std::string fnv1a64_hex(const Tensor<float> &t);
std::vector<double> read_series(H5::H5File &h5, const std::string &file, const std::string &path);
std::string read_bytes(H5::H5File &h5, const std::string &file, const std::string &path);
double read_double(H5::H5Object &obj, const std::string &file, const std::string &name);
int64_t read_int(H5::H5Object &obj, const std::string &file, const std::string &name);
std::string read_string(H5::H5Object &obj, const std::string &file, const std::string &name);
// A qrnn::Error "<file>: not a <what> (attribute format is not <format>)" unless the root says it is one.
void require_format(H5::H5File &h5, const std::string &file, const std::string &format, const std::string &what);
// require_format, then "<file>: <what> format_version 2, this build reads 1" unless format_version is `version`.
void require_format_version(H5::H5File &h5, const std::string &file, const std::string &format, int64_t version,
                            const std::string &what);

}  // namespace qrnn::h5
