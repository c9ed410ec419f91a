// `qrnn cache`: where the compiled-kernel cache is (runtime/kernel_cache.h), what it holds per component, and
// --clear to empty it; --list shows every entry.
#include <iostream>
#include <map>

#include "report/table.h"
#include "runtime/kernel_cache.h"
#include "tools/command.h"
#include "tools/options.h"

namespace po = boost::program_options;

namespace qrnn::cli {
namespace {

std::string mib(int64_t bytes) { return fixed(static_cast<double>(bytes) / (1 << 20), 1); }

// The component and the rest of an entry's key ("CompiledLayer|fo|tuned|...#0|target|...").
std::pair<std::string, std::string> split_key(const std::string &key) {
    const size_t bar = key.find('|');
    if (bar == std::string::npos) return {key.empty() ? "(unreadable)" : key, ""};
    return {key.substr(0, bar), key.substr(bar + 1)};
}

int64_t total_bytes(const std::vector<KernelCacheEntry> &entries) {
    int64_t total = 0;
    for (const auto &e : entries) total += e.bytes;
    return total;
}

void print_builtin() {
    const std::string dir = builtin_kernel_dir();
    if (dir.empty()) {
        std::cout << "built-in kernels: off (QRNN_BUILTIN_KERNEL_DIR=off)\n";
        return;
    }
    const std::vector<KernelCacheEntry> builtin = kernel_cache_entries(dir);
    std::cout << "built-in kernels: " << dir << ": entries " << builtin.size() << ", " << mib(total_bytes(builtin))
              << " MiB (read-only)\n";
}

void print_summary(const std::string &dir, const std::vector<KernelCacheEntry> &entries) {
    std::cout << "kernel cache: " << dir << ": entries " << entries.size() << ", " << mib(total_bytes(entries))
              << " MiB of " << mib(kernel_cache_limit_bytes()) << " MiB (QRNN_CACHE_MAX_MB)\n";
    print_builtin();
    if (entries.empty()) return;
    std::map<std::string, std::pair<int, int64_t>> by_component;
    for (const auto &e : entries) {
        auto &c = by_component[split_key(e.key).first];
        c.first++, c.second += e.bytes;
    }
    Table table({"component", "entries", "MiB"});
    for (const auto &[name, c] : by_component) table.add({name, std::to_string(c.first), mib(c.second)});
    std::cout << "\n";
    table.print(std::cout);
}

void print_entries(const std::vector<KernelCacheEntry> &entries) {
    Table table({"component", "key", "KiB", "age_h"});
    const int64_t now = static_cast<int64_t>(std::time(nullptr));
    for (const auto &e : entries) {
        auto [component, rest] = split_key(e.key);
        table.add({component, rest.substr(0, rest.find('|', rest.find('#'))), std::to_string(e.bytes >> 10),
                   fixed(static_cast<double>(now - e.used) / 3600, 1)});
    }
    std::cout << "\n";
    table.print(std::cout);
}

int cache_command(const std::vector<std::string> &args) {
    po::options_description desc("qrnn cache options");
    desc.add_options()("help,h", "show this help")("list", "show every entry (component, key, size, hours since use)")
        ("clear", "remove every entry");
    po::variables_map vm;
    if (!parse_options("usage: qrnn cache [--list] [--clear]   (QRNN_CACHE_DIR=off turns the cache off)", desc, args, vm))
        return kExitOk;
    const std::string dir = kernel_cache_dir();
    if (dir.empty()) {
        std::cout << "kernel cache: off (QRNN_CACHE_DIR=off)\n";
        return kExitOk;
    }
    std::vector<KernelCacheEntry> entries = kernel_cache_entries(dir);
    if (vm.count("clear")) {
        clear_kernel_cache(dir);
        std::cout << "kernel cache: " << dir << ": removed " << entries.size() << " entries ("
                  << mib(total_bytes(entries)) << " MiB)\n";
        return kExitOk;
    }
    print_summary(dir, entries);
    if (vm.count("list")) print_entries(entries);
    return kExitOk;
}

const bool cmd_cache_registered =
    register_command({"cache", "show or clear the cache of compiled kernels (--list, --clear)", cache_command});
}  // namespace
}  // namespace qrnn::cli
