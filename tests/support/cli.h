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
std::string write_scratch(const std::string &name, const std::string &text);  // scratch_path with text in it

// Runs the CLI and checks (gtest EXPECT) its exit code and that its output contains message.
void expect_cli(const std::string &args, int exit_code, const std::string &message);

}  // namespace qrnn::test
