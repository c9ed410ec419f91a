// Fuzzing of the CLI's argument parsing and validation: argument lists from tests/fuzz/cli/args.txt, mutated
// by token (dictionary options and hostile values, deleted, duplicated, spliced) and by byte, each run as a
// `qrnn` process (`run` and `sweep` with --dry-run: validation, no compiling). Every run must exit 0-3 (ok, check failed, bad input, unavailable) within the time limit:
// no signal, no abort, no hang. Budget QRNN_FUZZ_SECONDS (default 20 s), seed QRNN_FUZZ_SEED.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "core/error.h"
#include "tests/support/cli.h"
#include "tests/support/fuzz.h"

namespace qrnn::test {
namespace {
namespace fs = std::filesystem;

constexpr double kSeconds = 20, kProcessLimitSeconds = 60;

std::vector<std::string> split(const std::string &line) {
    std::vector<std::string> tokens;
    std::istringstream in(line);
    for (std::string t; in >> t;) tokens.push_back(t);
    return tokens;
}

std::string join(const std::vector<std::string> &tokens) {
    std::string s;
    for (auto &t : tokens) s += (s.empty() ? "" : "\x1f") + t;  // unit separator: tokens may contain spaces
    return s;
}

// Runs qrnn with args (cwd: a scratch directory); "" if it ended acceptably (exit code in *code), else
// what went wrong.
std::string run_qrnn(const std::vector<std::string> &args, const std::string &cwd, const std::string &log, int *code = nullptr) {
    pid_t pid = fork();
    if (pid == 0) {
        if (chdir(cwd.c_str()) != 0) _exit(120);
        int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 1);
        dup2(fd, 2);
        std::vector<char *> argv{const_cast<char *>(QRNN_CLI)};
        for (auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
        argv.push_back(nullptr);
        execv(QRNN_CLI, argv.data());
        _exit(121);
    }
    const auto start = std::chrono::steady_clock::now();
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > kProcessLimitSeconds) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return "still running after " + std::to_string(int(kProcessLimitSeconds)) + " s (killed)";
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
    if (WEXITSTATUS(status) > 3) return "exit code " + std::to_string(WEXITSTATUS(status));
    if (code) *code = WEXITSTATUS(status);
    return "";
}

TEST(Fuzz, CliArguments) {
    const std::string dir = scratch_path("cli_fuzz");
    fs::create_directories(dir);
    const std::string log = scratch_path("cli_fuzz.log"), results = scratch_path("results.h5");
    const fs::path sweeps = fs::path(QRNN_SOURCE_DIR) / "tests" / "fuzz" / "sweep";
    const std::string sweep = (sweeps / "every_key.yaml").string();
    // A small results file for report/merge/--load.
    {
        std::ofstream(dir + "/tiny.yaml") << "name: tiny\nbase: {batch: 1, seq: 2, input: 3, hidden: 4, warmup: 0, repeats: 1}\n";
        ASSERT_EQ(run_qrnn({"sweep", dir + "/tiny.yaml", "-o", results}, dir, log), "");
    }
    std::vector<std::vector<std::string>> corpus;
    for (auto &line : load_corpus("cli", true)) {
        std::vector<std::string> tokens = split(line);
        for (auto &t : tokens) {
            if (t == "@SWEEP@") t = sweep;
            else if (t == "@RESULTS@") t = results;
            else if (t == "@DIR@") t = dir;
            else if (t == "@OUT@") t = dir + "/out.h5";
        }
        corpus.push_back(tokens);
    }
    const std::vector<std::string> dictionary{
        "--model", "--pooling", "--window", "--batch", "--seq", "--input", "--hidden", "--layers", "--schedule", "--knob",
        "--target", "--mode", "--zoneout", "--dropout", "--seed", "--warmup", "--repeats", "--interleave", "--verify",
        "--tolerance", "--load", "--dump", "--max-memory", "--plugin", "--plugin-dir", "--shard", "--dry-run", "-o",
        "--retry-failed", "--force", "--help", "run", "sweep", "report", "merge", "schedules", "plugins", "0", "-1", "1",
        "3", "17", "99999999999", "-9223372036854775808", "1e3", "nan", "inf", "-0.5", "0.999", "", ",", "1,,2", "f,fo",
        "fused", "tuned-db", "chunked-scan", "naive", "auto-Li2018", "cuda-fused", "host-cuda", "chunk=0", "tile_t=100000",
        "chains=99999999999", "interleave=0", "=", "x=", "1/0", "3/2", "-3/4", "1K", "0G", "/", "/tmp", results, sweep,
        dir, "lstm-halide", "cnn", "lstm-cudnn", "train"};
    const std::vector<std::string> byte_corpus;  // byte mutation of single tokens uses no splicing
    std::map<std::string, std::vector<std::string>> args_of;  // joined -> tokens, for the runner
    auto make = [&](FuzzRng &rng, int64_t i) {
        std::vector<std::string> args = corpus[static_cast<size_t>(i) % corpus.size()];
        if (i >= static_cast<int64_t>(corpus.size())) {
            args = corpus[rng() % corpus.size()];
            const int edits = 1 + static_cast<int>(rng() % 3);
            for (int e = 0; e < edits; e++) {
                const size_t at = args.empty() ? 0 : rng() % (args.size() + 1);
                const std::string &token = dictionary[rng() % dictionary.size()];
                switch (rng() % 5) {
                case 0: args.insert(args.begin() + at, token); break;
                case 1: if (at < args.size()) args[at] = token; break;
                case 2: if (at < args.size()) args.erase(args.begin() + at); break;
                case 3: if (at < args.size()) args[at] = mutate(rng, args[at], byte_corpus, dictionary, 64); break;
                default: {
                    const auto &other = corpus[rng() % corpus.size()];
                    if (!other.empty()) args.insert(args.begin() + at, other[rng() % other.size()]);
                }
                }
            }
        }
        // Validation only: runs and sweeps compile pipelines for seconds (they are tested elsewhere).
        if (!args.empty() && (args[0] == "run" || args[0] == "sweep") &&
            std::find(args.begin(), args.end(), "--dry-run") == args.end())
            args.push_back("--dry-run");
        std::string key = join(args);
        args_of[key] = args;
        return key;
    };
    FuzzStats stats = fuzz_for("CLI arguments", kSeconds, make, [&](const std::string &key) {
        int code = 0;
        std::string why = run_qrnn(args_of.at(key), dir, log, &code);
        if (why.empty() && code == 2) throw Error("rejected");  // counted as a bad input
        if (why.empty()) return;
        std::ifstream in(log);
        std::string out((std::istreambuf_iterator<char>(in)), {});
        std::string shown = key;
        for (auto &c : shown) c = c == '\x1f' ? ' ' : c;
        ADD_FAILURE() << "qrnn " << shown << ": " << why << "\noutput:\n" << out.substr(out.size() > 2000 ? out.size() - 2000 : 0);
    });
    EXPECT_GE(stats.inputs, 5);
}

}  // namespace
}  // namespace qrnn::test
