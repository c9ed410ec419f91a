// A seeded mutation fuzzer for the parsers (tests/test_fuzz_*.cpp): inputs from a corpus (tests/fuzz/<dir>),
// mutated by byte and token edits, fed to the parser for a bounded time. An input may be rejected with a
// qrnn::Error (the contract for bad input); any other exception fails the test, and a crash prints the
// input before the process dies. Budget and seed: QRNN_FUZZ_SECONDS (default per target), QRNN_FUZZ_SEED.
#pragma once
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace qrnn::test {

using FuzzRng = std::mt19937_64;

// Every file of tests/fuzz/<dir> (split into lines if by_line), in name order.
std::vector<std::string> load_corpus(const std::string &dir, bool by_line = false);

// One to four stacked edits of input: bit flips, interesting bytes, deleted, duplicated or spliced spans
// (from another corpus entry), dictionary tokens inserted or replacing a word; at most max_size bytes.
std::string mutate(FuzzRng &rng, const std::string &input, const std::vector<std::string> &corpus,
                   const std::vector<std::string> &dictionary, size_t max_size = 4096);

struct FuzzStats {
    int64_t inputs = 0, rejected = 0;  // rejected: a qrnn::Error
};

// Calls one(make(rng)) until the budget (seconds) is spent; each corpus entry is tried unmutated first
// if make is given the iteration number below corpus_size. Records failures with ADD_FAILURE.
FuzzStats fuzz_for(const std::string &target, double default_seconds, const std::function<std::string(FuzzRng &, int64_t)> &make,
                   const std::function<void(const std::string &)> &one);

}  // namespace qrnn::test
