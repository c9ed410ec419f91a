// Running another program: argv[0] searched in PATH, no shell; waits for it and captures what it prints. Spawned
// with posix_spawn, so it is safe from a process with other threads running (the kernel cache links kernels from
// compile threads).
#pragma once
#include <string>
#include <vector>

namespace qrnn {

struct ProgramResult {
    bool started = false;  // false: not found or not executable
    int exit_code = -1;    // 128 + signal when killed by one
    std::string output;    // stdout (stderr too when `with_stderr`)
};
ProgramResult run_program(const std::vector<std::string> &argv, bool with_stderr = true);

}  // namespace qrnn
