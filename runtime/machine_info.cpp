#include "runtime/machine_info.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <thread>
#include <vector>

#include "schedules/tuning_db.h"
#include "schedules/cpu_target.h"

namespace qrnn {
namespace {

std::string command_output(const std::string &command) {
    std::string out;
    if (FILE *pipe = popen((command + " 2>/dev/null").c_str(), "r")) {
        char buf[256];
        size_t got;
        while ((got = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, got);
        if (pclose(pipe) != 0) return "";
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
}

std::string git_commit() {
    const std::string git = std::string("git -C '") + QRNN_SWEEP_REPO_DIR + "' ";
    std::string commit = command_output(git + "rev-parse HEAD");
    if (commit.empty()) return "unknown";
    if (!command_output(git + "status --porcelain --untracked-files=no").empty()) commit += "-dirty";
    return commit;
}

std::string performance_environment() {
    static const char *prefixes[] = {"OMP_", "GOMP_", "KMP_", "HL_", "DNNL_", "ONEDNN_", "OPENBLAS_", "MKL_", "CUDA_VISIBLE_DEVICES="};
    std::vector<std::string> found;
    for (char **e = environ; *e; e++)
        for (const char *p : prefixes)
            if (std::string(*e).rfind(p, 0) == 0) found.push_back(*e);
    std::sort(found.begin(), found.end());
    std::string s;
    for (auto &f : found) s += (s.empty() ? "" : " ") + f;
    return s;
}

}  // namespace

MachineInfo machine_info() {
    static const MachineInfo info = [] {
        MachineInfo m;
        char host[256] = {0};
        m.host = gethostname(host, sizeof host - 1) == 0 ? host : "unknown";
        m.cpu_model = cpu_info().model;
        m.cpu_id = cpu_info().id;
        m.cpu_isa = cpu_info().isa;
        m.host_target = tuning_target_name(Halide::get_jit_target_from_environment());
        m.cores = std::thread::hardware_concurrency();
        m.halide_version = QRNN_SWEEP_HALIDE_VERSION;
        m.git_commit = git_commit();
        m.environment = performance_environment();
        return m;
    }();
    return info;
}

}  // namespace qrnn
