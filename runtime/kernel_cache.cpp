#include "runtime/kernel_cache.h"

#include <Halide.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "core/error.h"
#include "runtime/run_program.h"

namespace qrnn {
namespace fs = std::filesystem;
namespace {

std::string env_or(const char *name, const std::string &fallback) {
    const char *v = std::getenv(name);
    return v && *v ? std::string(v) : fallback;
}

// 128-bit FNV-1a (two 64-bit lanes with different offsets) as 32 hex digits: the entry's file name; the full key
// is kept beside it and compared on lookup.
std::string key_hash(const std::string &key) {
    uint64_t a = 14695981039346656037ull, b = 0x84222325cbf29ce4ull ^ key.size();
    for (unsigned char ch : key) {
        a = (a ^ ch) * 1099511628211ull;
        b = (b ^ ch) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull;
    }
    char out[33];
    std::snprintf(out, sizeof out, "%016llx%016llx", static_cast<unsigned long long>(a), static_cast<unsigned long long>(b));
    return out;
}

std::string read_text(const fs::path &path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return in ? s.str() : std::string();
}

int64_t seconds_since_epoch(fs::file_time_type t) {
    return std::chrono::duration_cast<std::chrono::seconds>(t - fs::file_time_type::clock::now()).count() +
           std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The entries of dir, most recently used first; their keys read only when asked for.
std::vector<KernelCacheEntry> list_entries(const std::string &dir, bool with_keys) {
    std::vector<KernelCacheEntry> entries;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const fs::path p = it->path();
        if (p.extension() != ".so" || p.filename().string().rfind("tmp-", 0) == 0) continue;
        KernelCacheEntry e{p.string(), with_keys ? read_text(fs::path(p).replace_extension(".key")) : "", 0, 0};
        std::error_code size_ec, time_ec;
        e.bytes = static_cast<int64_t>(fs::file_size(p, size_ec));
        e.used = seconds_since_epoch(fs::last_write_time(p, time_ec));
        if (!size_ec && !time_ec) entries.push_back(e);
    }
    std::sort(entries.begin(), entries.end(), [](const auto &a, const auto &b) { return a.used > b.used; });
    return entries;
}

// Removes the least recently used entries until the cache fits its limit; never `keep` (the entry just stored).
void trim(const std::string &dir, const std::string &keep) {
    std::vector<KernelCacheEntry> entries = list_entries(dir, false);
    int64_t total = 0;
    for (const auto &e : entries) total += e.bytes;
    std::error_code ec;
    for (auto it = entries.rbegin(); it != entries.rend() && total > kernel_cache_limit_bytes(); ++it) {
        if (it->path == keep) continue;
        fs::remove(it->path, ec);
        fs::remove(fs::path(it->path).replace_extension(".key"), ec);
        total -= it->bytes;
    }
}

// --- code identity ---
struct BuildIdSearch {
    uintptr_t address;
    std::string id;
};

std::string hex(const unsigned char *p, size_t n) {
    std::string out;
    char buf[3];
    for (size_t i = 0; i < n; i++) std::snprintf(buf, sizeof buf, "%02x", p[i]), out += buf;
    return out;
}

// The GNU build id among the PT_NOTE segments of a loaded object, "" if it has none.
std::string note_build_id(const dl_phdr_info *info) {
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) &ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_NOTE) continue;
        const char *p = reinterpret_cast<const char *>(info->dlpi_addr + ph.p_vaddr), *end = p + ph.p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const auto *note = reinterpret_cast<const ElfW(Nhdr) *>(p);
            const char *name = p + sizeof(ElfW(Nhdr));
            const char *desc = name + ((note->n_namesz + 3) & ~3u);
            if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0)
                return hex(reinterpret_cast<const unsigned char *>(desc), note->n_descsz);
            p = desc + ((note->n_descsz + 3) & ~3u);
        }
    }
    return "";
}

int find_build_id(dl_phdr_info *info, size_t, void *data) {
    auto *search = static_cast<BuildIdSearch *>(data);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) &ph = info->dlpi_phdr[i];
        const uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
        if (ph.p_type != PT_LOAD || search->address < begin || search->address >= begin + ph.p_memsz) continue;
        search->id = note_build_id(info);
        if (search->id.empty()) {  // no build id: the file's name, size and modification time
            std::error_code ec;
            const fs::path file = *info->dlpi_name ? fs::path(info->dlpi_name) : fs::read_symlink("/proc/self/exe", ec);
            search->id = file.string() + ":" + std::to_string(fs::file_size(file, ec)) + ":" +
                         std::to_string(fs::last_write_time(file, ec).time_since_epoch().count());
        }
        return 1;
    }
    return 0;
}

std::string build_id_of(const void *address) {
    BuildIdSearch search{reinterpret_cast<uintptr_t>(address), ""};
    dl_iterate_phdr(find_build_id, &search);
    return search.id.empty() ? "unknown" : search.id;
}

std::mutex identity_mutex;
std::set<std::string> &plugin_ids() {
    static std::set<std::string> ids;
    return ids;
}

}  // namespace

std::string kernel_cache_dir() {
    const char *env = std::getenv("QRNN_CACHE_DIR");
    if (env && std::string(env) == "off") return "";
    if (env && *env) return env;
    const std::string home = env_or("HOME", "");
    const std::string base = env_or("XDG_CACHE_HOME", home.empty() ? "" : home + "/.cache");
    return base.empty() ? "" : base + "/qrnn";
}

int64_t kernel_cache_limit_bytes() {
    const std::string mb = env_or("QRNN_CACHE_MAX_MB", "2048");
    char *end = nullptr;
    const long long v = std::strtoll(mb.c_str(), &end, 10);
    if (*end || v < 0) fail("QRNN_CACHE_MAX_MB='", mb, "' is not a size in MiB (a whole number >= 0)");
    return static_cast<int64_t>(v) << 20;
}

std::vector<KernelCacheEntry> kernel_cache_entries(const std::string &dir) { return list_entries(dir, true); }

void clear_kernel_cache(const std::string &dir) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string ext = it->path().extension().string();
        if (ext == ".so" || ext == ".key" || ext == ".o" || ext == ".log") fs::remove(it->path(), ec);
    }
}

std::string builtin_kernel_dir() {
    if (const char *env = std::getenv("QRNN_BUILTIN_KERNEL_DIR"); env && *env) return std::string(env) == "off" ? "" : env;
    static const std::string dir = [] {
        Dl_info info{};
        if (!dladdr(reinterpret_cast<const void *>(&builtin_kernel_dir), &info) || !info.dli_fname) return std::string();
        return (fs::path(info.dli_fname).parent_path() / "qrnn-kernels").string();
    }();
    return dir;
}

std::string find_cached_kernel(const std::string &key) {
    const std::string dir = kernel_cache_dir();
    if (dir.empty()) return "";
    const std::string name = key_hash(key) + ".so";
    std::error_code ec;
    auto holds = [&](const fs::path &so) {
        return fs::exists(so, ec) && read_text(fs::path(so).replace_extension(".key")) == key;
    };
    if (const std::string builtin = builtin_kernel_dir(); !builtin.empty() && holds(fs::path(builtin) / name))
        return (fs::path(builtin) / name).string();
    const fs::path so = fs::path(dir) / name;
    if (!holds(so)) return "";
    fs::last_write_time(so, fs::file_time_type::clock::now(), ec);  // used now: kept longest by trim
    return so.string();
}

std::string kernel_temp_path(const std::string &suffix) {
    static std::atomic<int> counter{0};
    std::ostringstream name;
    name << "tmp-" << ::getpid() << "-" << std::hash<std::thread::id>()(std::this_thread::get_id()) << "-"
         << counter++ << suffix;
    return (fs::path(kernel_cache_dir()) / name.str()).string();
}

std::string store_kernel(const std::string &key, const std::string &object_file) {
    const fs::path dir = kernel_cache_dir();
    const fs::path so = dir / (key_hash(key) + ".so");
    const std::string tmp_so = kernel_temp_path(".so"), tmp_key = kernel_temp_path(".key");
    const std::string linker = env_or("CC", "cc");
    const ProgramResult link =
        run_program({linker, "-shared", "-Wl,-Bsymbolic", "-o", tmp_so, object_file, "-lpthread", "-ldl", "-lm"});
    std::error_code ec;
    if (link.exit_code != 0) {
        fs::remove(tmp_so, ec);
        fail("kernel cache: linking ", object_file, " failed (", linker,
             link.started ? ", exit " + std::to_string(link.exit_code) : " not found", "): ", link.output);
    }
    std::ofstream(tmp_key, std::ios::binary) << key;
    fs::rename(tmp_key, fs::path(so).replace_extension(".key"), ec);
    if (!ec) fs::rename(tmp_so, so, ec);
    if (ec) {
        fs::remove(tmp_so, ec);
        fs::remove(tmp_key, ec);
        fail("kernel cache: cannot store ", so.string(), ": ", ec.message());
    }
    trim(dir.string(), so.string());
    return so.string();
}

std::string kernel_code_identity() {
    static const std::string own = "qrnn " + build_id_of(reinterpret_cast<const void *>(&kernel_code_identity)) +
                                   " halide " + build_id_of(reinterpret_cast<const void *>(&Halide::get_host_target));
    std::lock_guard<std::mutex> lock(identity_mutex);
    std::string id = own;
    for (const std::string &p : plugin_ids()) id += " plugin " + p;
    return id;
}

void note_kernel_code(const void *address) {
    const std::string id = build_id_of(address);
    std::lock_guard<std::mutex> lock(identity_mutex);
    plugin_ids().insert(id);
}

}  // namespace qrnn
