#include "runtime/writer_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "runtime/atomic_file.h"

namespace qrnn {

WriterLock::WriterLock(const std::string &results_path, const std::string &what_to_do) {
    if (std::filesystem::is_directory(results_path)) fail(results_path, ": is a directory, not a results file");
    check_output_file(results_path, "results");  // a device, FIFO or socket is never replaced; a name that fits
    const std::string lock_path = resolve_output_path(results_path) + ".lock";  // one lock per real file
    fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) fail(lock_path, ": cannot create lock file: ", std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        char buf[32] = {0};
        ssize_t got = ::pread(fd_, buf, sizeof buf - 1, 0);
        std::string pid = got > 0 ? std::string(buf, static_cast<size_t>(got)) : "unknown";
        while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
        ::close(fd_);
        fd_ = -1;
        fail(results_path, " is being written by another process (pid ", pid, ", lock ", lock_path, "); ", what_to_do);
    }
    std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) < 0) { /* the lock itself holds */ }
}

WriterLock::~WriterLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the flock; the lock file stays (removing it would race)
}

}  // namespace qrnn
