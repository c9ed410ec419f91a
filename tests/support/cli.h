// Test helpers: run the qrnn CLI and capture its exit code and output; scratch files.
#pragma once
#include <string>

namespace qrnn::test {

struct CliResult {
    int exit_code;
    std::string output;  // stdout and stderr together
};

CliResult run_cli(const std::string &args);  // runs "$QRNN_CLI <args>"
CliResult run_shell(const std::string &command);  // runs a /bin/sh command line; its stdout only (add 2>&1)
std::string scratch_path(const std::string &name);  // a fresh path in a per-process temporary directory

}  // namespace qrnn::test
