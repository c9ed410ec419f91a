// Test helpers: run the qrnn CLI and capture its exit code and output; scratch files.
#pragma once
#include <functional>
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
// Lines [first, first + lines) of PTB's validation split (data/ptb/ptb.valid.txt) as scratch file `name`: a small
// real corpus.
std::string ptb_slice(const std::string &name, int first, int lines);

// Starts `qrnn <args>` (output discarded) and kills it (SIGKILL) as soon as `ready()` holds (polled every 5 ms, for
// up to 5 minutes); expects (gtest) that it was killed, not ended by itself.
void kill_cli_when(const std::string &args, const std::function<bool()> &ready);

// Runs the CLI and checks (gtest EXPECT) its exit code and that its output contains message.
void expect_cli(const std::string &args, int exit_code, const std::string &message);

}  // namespace qrnn::test
