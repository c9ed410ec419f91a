// Test helpers: run the qrnn CLI and capture its exit code and output; scratch files.
#pragma once
#include <string>

namespace qrnn::test {

struct CliResult {
    int exit_code;
    std::string output;  // stdout and stderr together
};

CliResult run_cli(const std::string &args);  // runs "$QRNN_CLI <args>"
std::string scratch_path(const std::string &name);  // a fresh path in a per-process temporary directory

}  // namespace qrnn::test
