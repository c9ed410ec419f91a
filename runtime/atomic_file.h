// Files replaced atomically: the new content goes to a uniquely named temporary file in the same directory
// ("PATH.tmp-XXXXXX", mkstemp), is fsync'ed and renamed over PATH. A failure (full disk, no permission)
// removes the temporary file and leaves PATH as it was; so does Ctrl-C (SIGINT/SIGTERM/SIGHUP) during the
// write. HDF5 files are built in memory first, so libhdf5 itself never sees a failing disk.
#pragma once
#include <H5Cpp.h>

#include <functional>
#include <string>

namespace qrnn {

// The file a write to path replaces: path with its chain of symbolic links followed (a dangling link: its target).
std::string resolve_output_path(const std::string &path);
// Throws qrnn::Error "<path>: is a character device, cannot write <what> there" unless path (through symbolic links)
// is absent or a regular file, its name fits NAME_MAX with the temporary suffix and its directory is not a file.
void check_output_file(const std::string &path, const std::string &what);

// Replaces path with bytes (through symbolic links: the link stays, the file it names is replaced; refused
// unless check_output_file passes); throws qrnn::Error "<path>: cannot write <what>: <reason>".
void write_file_atomically(const std::string &path, const std::string &bytes, const std::string &what);

// Builds an HDF5 file in memory with fill (H5::Exception from fill become qrnn::Error), then replaces
// path with it (write_file_atomically).
void write_hdf5_atomically(const std::string &path, const std::string &what, const std::function<void(H5::H5File &)> &fill);

// Opens an existing HDF5 file read-only; a missing file, a directory, a non-HDF5 file or one libhdf5
// cannot open is a qrnn::Error naming path and what ("<path>: is a directory, not a <what>").
H5::H5File open_hdf5_for_reading(const std::string &path, const std::string &what);

// Removes temporary files of path left by a writer that was killed (SIGKILL) mid-write. Call only while
// holding the exclusive writer lock of path.
void remove_stale_temp_files(const std::string &path);

}  // namespace qrnn
