#include "lm/run_files.h"

#include <filesystem>
#include <map>

#include "core/error.h"
#include "runtime/atomic_file.h"

namespace qrnn::lm {
namespace {

// "key 'lr' is '20' there, '10' here" for the first key where two identity() strings differ.
std::string first_difference(const std::string &theirs, const std::string &ours) {
    auto items = [](const std::string &s) {
        std::map<std::string, std::string> m;
        for (size_t at = 0, end; (end = s.find(';', at)) != std::string::npos; at = end + 1) {
            const std::string item = s.substr(at, end - at);
            const size_t eq = item.find('=');
            m[item.substr(0, eq)] = item.substr(eq + 1);
        }
        return m;
    };
    auto a = items(theirs), b = items(ours);
    for (auto &[key, value] : b)
        if (a[key] != value) return "key '" + key + "' is '" + a[key] + "' there, '" + value + "' here";
    return "a key differs";
}

}  // namespace

std::unique_ptr<WriterLock> prepare_run_files(const TrainConfig &cfg) {
    for (const std::string *path : {&cfg.checkpoint, &cfg.results}) {
        const auto dir = std::filesystem::path(*path).parent_path();
        if (!path->empty() && !dir.empty()) std::filesystem::create_directories(dir);
    }
    if (cfg.checkpoint.empty()) return nullptr;
    auto lock = std::make_unique<WriterLock>(cfg.checkpoint, "wait for it, or name another --checkpoint");
    remove_stale_temp_files(cfg.checkpoint);
    return lock;
}

void require_same_identity(const std::string &checkpoint, const std::string &saved, const std::string &now) {
    if (saved != now)
        fail(checkpoint, ": checkpoint of another configuration (", first_difference(saved, now),
             "); delete it or name another --checkpoint");
}

}  // namespace qrnn::lm
