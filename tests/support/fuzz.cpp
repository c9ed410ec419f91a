#include "tests/support/fuzz.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace qrnn::test {
namespace fs = std::filesystem;
namespace {

const std::string *current_input = nullptr;  // printed by the crash handler

void print_input_and_reraise(int sig) {
    const char head[] = "\n*** fuzz: crash on this input (between the markers) ***\n>>>";
    ssize_t ignored = ::write(2, head, sizeof head - 1);
    if (current_input) ignored = ::write(2, current_input->data(), current_input->size());
    ignored = ::write(2, "<<<\n", 4);
    (void)ignored;
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

double env_double(const char *name, double fallback) {
    const char *v = std::getenv(name);
    return v && *v ? std::atof(v) : fallback;
}

const char kInteresting[] = {'\0', '\n', '\t', ' ', ':', '-', ',', '[', ']', '{', '}', '"', '\'', '#', '&', '*',
                             '!', '|', '>', '%', '@', '\\', '0', '9', '.', 'e', '\x7f', '\xff', '\xc3'};
}  // namespace

std::vector<std::string> load_corpus(const std::string &dir, bool by_line) {
    std::vector<fs::path> files;
    for (auto &e : fs::directory_iterator(fs::path(QRNN_SOURCE_DIR) / "tests" / "fuzz" / dir))
        if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    std::vector<std::string> corpus;
    for (auto &f : files) {
        std::ifstream in(f, std::ios::binary);
        std::string text((std::istreambuf_iterator<char>(in)), {});
        if (!by_line) {
            corpus.push_back(text);
            continue;
        }
        std::istringstream lines(text);
        for (std::string line; std::getline(lines, line);)
            if (!line.empty() && line[0] != '#') corpus.push_back(line);
    }
    return corpus;
}

std::string mutate(FuzzRng &rng, const std::string &input, const std::vector<std::string> &corpus,
                   const std::vector<std::string> &dictionary, size_t max_size) {
    std::string s = input;
    auto pick = [&](size_t n) { return n == 0 ? size_t(0) : static_cast<size_t>(rng() % n); };
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; e++) {
        const size_t at = pick(s.size() + 1);
        switch (rng() % 8) {
        case 0:  // flip a bit
            if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << (rng() % 8));
            break;
        case 1:  // an interesting byte
            if (!s.empty()) s[pick(s.size())] = kInteresting[pick(sizeof kInteresting)];
            break;
        case 2:  // delete a span
            s.erase(at, 1 + pick(16));
            break;
        case 3: {  // duplicate a span
            std::string span = s.substr(at, 1 + pick(32));
            s.insert(pick(s.size() + 1), span);
            break;
        }
        case 4: {  // splice a span of another corpus entry
            if (corpus.empty()) break;
            const std::string &other = corpus[pick(corpus.size())];
            s.insert(at, other.substr(pick(other.size() + 1), 1 + pick(64)));
            break;
        }
        case 5:  // insert a dictionary token
        case 6: {  // or replace the word at `at` with one
            if (dictionary.empty()) break;
            const std::string &token = dictionary[pick(dictionary.size())];
            if (rng() % 2 == 0 || at >= s.size()) {
                s.insert(at, token);
            } else {
                size_t end = s.find_first_of(" \t\n,:[]{}=", at);
                s.replace(at, (end == std::string::npos ? s.size() : end) - at, token);
            }
            break;
        }
        default:  // truncate
            s.resize(at);
            break;
        }
    }
    if (s.size() > max_size) s.resize(max_size);
    return s;
}

FuzzStats fuzz_for(const std::string &target, double default_seconds, const std::function<std::string(FuzzRng &, int64_t)> &make,
                   const std::function<void(const std::string &)> &one) {
    const double seconds = env_double("QRNN_FUZZ_SECONDS", default_seconds);
    const uint64_t seed = static_cast<uint64_t>(env_double("QRNN_FUZZ_SEED", 1));
    FuzzRng rng(seed);
    for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, print_input_and_reraise);
    FuzzStats stats;
    int failures = 0;
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds && failures < 5) {
        const std::string input = make(rng, stats.inputs);
        current_input = &input;
        stats.inputs++;
        try {
            one(input);
        } catch (const Error &) {
            stats.rejected++;
        } catch (const std::exception &e) {
            failures++;
            ADD_FAILURE() << target << ": not a qrnn::Error but " << e.what() << "\ninput:\n>>>" << input << "<<<";
        } catch (...) {
            failures++;
            ADD_FAILURE() << target << ": a non-standard exception\ninput:\n>>>" << input << "<<<";
        }
        current_input = nullptr;
    }
    for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, SIG_DFL);
    std::cout << "fuzz " << target << ": " << stats.inputs << " inputs in " << seconds << " s (seed " << seed << "), "
              << stats.rejected << " rejected with a qrnn::Error\n";
    return stats;
}

}  // namespace qrnn::test
