// An exclusive writer lock on an output file (results, checkpoint), shared by sweeps and qrnn train.
#pragma once
#include <string>

namespace qrnn {

// An exclusive writer lock on a results file (flock on "<path>.lock", released when the process ends, even
// by SIGKILL; on the real file's name: through symbolic links). A second writer gets a qrnn::Error naming the
// holder's pid, then `what_to_do`. A path that is not a regular file (a directory, device, FIFO) is refused first.
class WriterLock {
public:
    explicit WriterLock(const std::string &results_path,
                        const std::string &what_to_do = "wait for it, or write to another file and `qrnn merge` them");
    ~WriterLock();
    WriterLock(const WriterLock &) = delete;
    WriterLock &operator=(const WriterLock &) = delete;

private:
    int fd_ = -1;
};

}  // namespace qrnn
