#include "plugins/loader.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>

#include "core/error.h"
#include "core/pooling.h"
#include "plugins/model.h"
#include "plugins/plugin_api.h"
#include "runtime/kernel_cache.h"
#include "schedules/schedule.h"

namespace qrnn {
namespace fs = std::filesystem;
namespace {
std::mutex loader_mutex;
std::set<std::string> &loaded_files() {
    static std::set<std::string> files;
    return files;
}
std::map<std::pair<std::string, std::string>, std::string> &sources() {
    static std::map<std::pair<std::string, std::string>, std::string> s;
    return s;
}

// Names per kind, to see what a library registered.
std::map<std::string, std::vector<std::string>> snapshot() {
    return {{"pooling", pooling_names()}, {"model", model_names()}, {"schedule", layer_schedule_names()}};
}

bool is_elf(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    char magic[4] = {};
    in.read(magic, 4);
    return in.gcount() == 4 && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
}
}  // namespace

void load_plugin(const std::string &path) {
    std::lock_guard<std::mutex> lock(loader_mutex);
    std::error_code ec;
    if (!fs::exists(path, ec)) fail("plugin '", path, "': no such file");
    if (!fs::is_regular_file(path, ec)) fail("plugin '", path, "': not a regular file");
    const std::string real = fs::canonical(path).string();
    if (loaded_files().count(real)) return;
    if (!is_elf(real)) fail("plugin '", path, "': not a shared library (no ELF header)");

    void *handle = dlopen(real.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *why = dlerror();
        fail("plugin '", path, "': not a loadable shared library (", why ? why : "dlopen failed", ")");
    }
    auto entry_fn = reinterpret_cast<QrnnPluginEntryFn>(dlsym(handle, QRNN_PLUGIN_ENTRY_SYMBOL));
    if (!entry_fn) {
        dlclose(handle);
        fail("plugin '", path, "': entry point ", QRNN_PLUGIN_ENTRY_SYMBOL,
             " missing (define it with QRNN_PLUGIN from plugins/plugin_api.h)");
    }
    const QrnnPluginEntry *entry = entry_fn();
    if (!entry || entry->abi_version != QRNN_PLUGIN_ABI_VERSION) {
        int got = entry ? entry->abi_version : -1;
        dlclose(handle);
        fail("plugin '", path, "': ABI version ", got, ", this qrnn needs ", QRNN_PLUGIN_ABI_VERSION,
             " (rebuild the plugin against this qrnn)");
    }
    if (!entry->register_plugins) fail("plugin '", path, "': entry point has no register function");
    auto before = snapshot();
    note_kernel_code(reinterpret_cast<const void *>(entry_fn));  // its pipelines' cached kernels depend on its code
    try {
        entry->register_plugins();
    } catch (const std::exception &e) {
        // The library stays loaded: part of it may already be registered and reference its code.
        fail("plugin '", path, "': ", e.what());
    } catch (...) {
        fail("plugin '", path, "': its register function threw a non-standard exception");
    }
    loaded_files().insert(real);
    for (auto &[kind, names] : snapshot()) {
        const auto &old = before[kind];
        for (auto &name : names)
            if (!std::count(old.begin(), old.end(), name)) sources()[{kind, name}] = real;
    }
}

void load_plugin_dir(const std::string &dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) fail("plugin directory '", dir, "': no such directory");
    std::vector<std::string> files;
    for (auto &e : fs::directory_iterator(dir))
        if (e.path().extension() == ".so") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    for (auto &f : files) load_plugin(f);
}

void load_plugin_path_from_env() {
    const char *env = std::getenv("QRNN_PLUGIN_PATH");
    if (!env) return;
    std::string path = env;
    size_t start = 0;
    while (start <= path.size()) {
        size_t end = path.find(':', start);
        if (end == std::string::npos) end = path.size();
        std::string dir = path.substr(start, end - start);
        if (!dir.empty()) {
            try {
                load_plugin_dir(dir);
            } catch (const Error &e) {
                fail("QRNN_PLUGIN_PATH: ", e.what());
            }
        }
        start = end + 1;
    }
}

std::string plugin_source(const std::string &kind, const std::string &name) {
    std::lock_guard<std::mutex> lock(loader_mutex);
    auto it = sources().find({kind, name});
    return it == sources().end() ? "built-in" : it->second;
}

}  // namespace qrnn
