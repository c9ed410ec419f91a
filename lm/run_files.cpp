#include "lm/run_files.h"

#include <cmath>
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
    check_output_files(cfg);
    for (const std::string *path : {&cfg.checkpoint, &cfg.results, &cfg.save_initial, &cfg.step_log}) {
        const auto dir = std::filesystem::path(*path).parent_path();
        if (!path->empty() && !dir.empty()) std::filesystem::create_directories(dir);
    }
    if (cfg.checkpoint.empty()) return nullptr;
    auto lock = std::make_unique<WriterLock>(cfg.checkpoint, "wait for it, or name another --checkpoint");
    remove_stale_temp_files(cfg.checkpoint);
    return lock;
}

void require_finite(const std::string &what, double value, int64_t step, const std::string &checkpoint) {
    if (std::isfinite(value)) return;
    fail("step ", step, ": ", what, " is ", value, ": training diverged (lower lr, or clip); stopped",
         checkpoint.empty() ? std::string(" (no checkpoint)") : ", " + checkpoint + " keeps the last finite state written");
}

void require_finite_params(const std::vector<nn::Param> &params, int64_t step, const std::string &checkpoint) {
    for (const nn::Param &p : params)
        for (float v : p.value->data)
            if (!std::isfinite(v)) require_finite("parameter " + p.name, v, step, checkpoint);
}

void check_token_files(const TrainConfig &cfg) {
    for (auto &[key, path] : {std::pair{"train", cfg.train}, {"valid", cfg.valid}, {"test", cfg.test}}) {
        if (path.empty()) continue;
        std::error_code ec;
        const auto st = std::filesystem::status(path, ec);
        if (!std::filesystem::exists(st)) fail("key '", key, "': ", path, ": no such token file");
        if (std::filesystem::is_directory(st)) fail("key '", key, "': ", path, ": is a directory, not a token file");
        if (std::filesystem::is_regular_file(st) && std::filesystem::file_size(path, ec) == 0)
            fail("key '", key, "': ", path, ": token file holds no words (empty)");
    }
}

void check_output_files(const TrainConfig &cfg) {
    if (!cfg.checkpoint.empty()) check_output_file(cfg.checkpoint, "a training checkpoint (key 'checkpoint')");
    if (!cfg.results.empty()) check_output_file(cfg.results, "a results file (key 'results')");
    if (!cfg.save_initial.empty()) check_output_file(cfg.save_initial, "a training checkpoint (key 'save_initial')");
    if (!cfg.step_log.empty()) check_output_file(cfg.step_log, "a step log (key 'step_log')");
    if (!cfg.checkpoint.empty() && !cfg.results.empty() && resolve_output_path(cfg.checkpoint) == resolve_output_path(cfg.results))
        fail("keys 'checkpoint' and 'results' name the same file ", cfg.results);
}

void require_same_identity(const std::string &checkpoint, const std::string &saved, const std::string &now) {
    if (saved != now)
        fail(checkpoint, ": checkpoint of another configuration (", first_difference(saved, now),
             "); delete it or name another --checkpoint");
}

}  // namespace qrnn::lm
