#include "tests/support/cli.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

namespace qrnn::test {

CliResult run_cli(const std::string &args) { return run_shell(std::string(QRNN_CLI) + " " + args + " 2>&1"); }

CliResult run_shell(const std::string &command) {
    FILE *pipe = popen(command.c_str(), "r");
    CliResult r{-1, ""};
    if (!pipe) return r;
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, pipe)) > 0) r.output.append(buf, got);
    int status = pclose(pipe);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

std::string scratch_path(const std::string &name) {
    static const std::filesystem::path dir = [] {
        auto d = std::filesystem::temp_directory_path() / ("qrnn_test_" + std::to_string(getpid()));
        std::filesystem::remove_all(d);
        std::filesystem::create_directories(d);
        return d;
    }();
    auto p = dir / name;
    std::filesystem::remove(p);
    return p.string();
}

std::string write_scratch(const std::string &name, const std::string &text) {
    std::string path = scratch_path(name);
    std::ofstream(path) << text;
    return path;
}

std::string ptb_slice(const std::string &name, int first, int lines) {
    std::ifstream in(std::string(QRNN_SOURCE_DIR) + "/data/ptb/ptb.valid.txt");
    std::string line, text;
    for (int i = 0; std::getline(in, line) && i < first + lines; i++)
        if (i >= first) text += line + "\n";
    return write_scratch(name, text);
}

void kill_cli_when(const std::string &args, const std::function<bool()> &ready) {
    const pid_t pid = fork();
    if (pid == 0) {
        const std::string cmd = std::string("exec ") + QRNN_CLI + " " + args + " >/dev/null 2>&1";
        execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char *>(nullptr));
        _exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
    while (std::chrono::steady_clock::now() < deadline && !ready()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status)) << "the run ended before it was killed: " << args;
}

void expect_cli(const std::string &args, int exit_code, const std::string &message) {
    CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, exit_code) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << "\nwant: " << message << "\ngot: " << r.output;
}

}  // namespace qrnn::test
