#include "runtime/atomic_file.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <vector>

#include "core/error.h"

namespace qrnn {
namespace fs = std::filesystem;
namespace {

// The temporary file being written, for the signal handler (which may only use async-signal-safe calls).
char pending_temp[PATH_MAX];
volatile sig_atomic_t temp_pending = 0;
std::mutex write_mutex;  // one atomic write at a time (pending_temp is shared)

void remove_pending_and_reraise(int sig) {
    if (temp_pending) ::unlink(pending_temp);
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

// Installed once, only for signals whose disposition is still the default (a handler set by the program
// is kept).
void install_signal_cleanup() {
    static const bool installed = [] {
        for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
            struct sigaction old {};
            if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) std::signal(sig, remove_pending_and_reraise);
        }
        return true;
    }();
    (void)installed;
}

std::string temp_prefix(const std::string &path) { return fs::path(path).filename().string() + ".tmp-"; }

bool write_all(int fd, const std::string &bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
        ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<size_t>(n);
    }
    return true;
}

void fsync_directory(const std::string &path) {
    std::string dir = fs::path(path).parent_path().string();
    int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY);
    if (fd < 0) return;
    ::fsync(fd);
    ::close(fd);
}

const char *file_kind(fs::file_type type) {
    switch (type) {
        case fs::file_type::directory: return "a directory";
        case fs::file_type::character: return "a character device";
        case fs::file_type::block: return "a block device";
        case fs::file_type::fifo: return "a FIFO";
        case fs::file_type::socket: return "a socket";
        default: return "not a regular file";
    }
}

}  // namespace

std::string resolve_output_path(const std::string &path) {
    fs::path p(path);
    std::error_code ec;
    for (int hops = 0; fs::is_symlink(fs::symlink_status(p, ec)); hops++) {
        if (hops == 40) fail(path, ": too many levels of symbolic links");
        const fs::path target = fs::read_symlink(p, ec);
        if (ec) fail(path, ": cannot read symbolic link: ", ec.message());
        p = target.is_absolute() ? target : p.parent_path() / target;
    }
    return p.string();
}

void check_output_file(const std::string &path, const std::string &what) {
    const std::string real = resolve_output_path(path);
    std::error_code ec;
    const fs::file_status st = fs::status(real, ec);
    if (fs::exists(st) && !fs::is_regular_file(st))
        fail(path, ": is ", file_kind(st.type()), ", cannot write ", what, " there (only a regular file is replaced)");
    const std::string name = fs::path(real).filename().string();
    if (name.empty()) fail(path, ": names no file, cannot write ", what, " there");
    if (name.size() + 11 > NAME_MAX)  // the temporary file adds ".tmp-XXXXXX"
        fail(path, ": file name too long (", name.size(), " bytes; at most ", NAME_MAX - 11, ") for ", what);
    const fs::path dir = fs::path(real).parent_path();
    if (!dir.empty() && fs::exists(dir, ec) && !fs::is_directory(dir, ec)) fail(path, ": ", dir.string(), " is not a directory");
}

void write_file_atomically(const std::string &user_path, const std::string &bytes, const std::string &what) {
    check_output_file(user_path, what);
    const std::string path = resolve_output_path(user_path);  // through symlinks: the link stays, its target is replaced
    std::lock_guard<std::mutex> lock(write_mutex);
    install_signal_cleanup();
    std::string dir = fs::path(path).parent_path().string();
    std::string tmp = (dir.empty() ? "" : dir + "/") + temp_prefix(path) + "XXXXXX";
    if (tmp.size() >= PATH_MAX) fail(path, ": cannot write ", what, ": path too long");
    std::vector<char> name(tmp.begin(), tmp.end());
    name.push_back('\0');
    // The signals are blocked from creating the file until the handler knows its name.
    sigset_t cleanup_signals, before;
    sigemptyset(&cleanup_signals);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&cleanup_signals, sig);
    ::pthread_sigmask(SIG_BLOCK, &cleanup_signals, &before);
    int fd = ::mkstemp(name.data());
    const int mkstemp_errno = errno;
    if (fd >= 0) {
        std::memcpy(pending_temp, name.data(), name.size());
        temp_pending = 1;
    }
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
    if (fd < 0) fail(user_path, ": cannot write ", what, ": ", std::strerror(mkstemp_errno));
    tmp = name.data();
    std::string why;
    if (!write_all(fd, bytes) || ::fsync(fd) != 0) why = std::strerror(errno);
    if (::fchmod(fd, 0644) != 0 && why.empty()) why = std::strerror(errno);
    if (::close(fd) != 0 && why.empty()) why = std::strerror(errno);
    if (why.empty() && std::rename(tmp.c_str(), path.c_str()) != 0) why = std::strerror(errno);
    if (!why.empty()) ::unlink(tmp.c_str());
    temp_pending = 0;
    if (!why.empty()) fail(user_path, ": cannot write ", what, ": ", why, " (the previous file, if any, is unchanged)");
    fsync_directory(path);
}

void write_hdf5_atomically(const std::string &path, const std::string &what, const std::function<void(H5::H5File &)> &fill) {
    std::string image;
    try {
        H5::Exception::dontPrint();
        H5::FileAccPropList in_memory;
        in_memory.setCore(1 << 20, false);  // core driver without backing store: nothing touches the disk
        H5::H5File file(path + " (in memory)", H5F_ACC_TRUNC, H5::FileCreatPropList::DEFAULT, in_memory);
        fill(file);
        file.flush(H5F_SCOPE_GLOBAL);
        ssize_t size = H5Fget_file_image(file.getId(), nullptr, 0);
        if (size < 0) fail(path, ": cannot write ", what, ": HDF5 file image unavailable");
        image.resize(static_cast<size_t>(size));
        if (H5Fget_file_image(file.getId(), image.data(), image.size()) != size)
            fail(path, ": cannot write ", what, ": HDF5 file image unavailable");
        file.close();
    } catch (const H5::Exception &e) {
        fail(path, ": cannot write ", what, ": ", e.getDetailMsg());
    }
    write_file_atomically(path, image, what);
}

H5::H5File open_hdf5_for_reading(const std::string &path, const std::string &what) {
    H5::Exception::dontPrint();
    std::error_code ec;
    if (!fs::exists(path, ec)) fail(path, ": no such file");
    if (fs::is_directory(path, ec)) fail(path, ": is a directory, not ", what);
    if (!fs::is_regular_file(path, ec)) fail(path, ": not a regular file, not ", what);
    try {
        if (!H5::H5File::isHdf5(path.c_str())) fail(path, ": not an HDF5 file (expected ", what, ")");
        return H5::H5File(path, H5F_ACC_RDONLY);
    } catch (const H5::Exception &e) {
        fail(path, ": cannot open ", what, ": ", e.getDetailMsg());
    }
}

void remove_stale_temp_files(const std::string &user_path) {
    const std::string path = resolve_output_path(user_path);
    std::string dir = fs::path(path).parent_path().string(), prefix = temp_prefix(path);
    std::error_code ec;
    for (auto &entry : fs::directory_iterator(dir.empty() ? "." : dir, ec)) {
        std::string name = entry.path().filename().string();
        if (name.size() == prefix.size() + 6 && name.compare(0, prefix.size(), prefix) == 0) fs::remove(entry.path(), ec);
    }
}

}  // namespace qrnn
