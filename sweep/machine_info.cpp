#include "sweep/machine_info.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <thread>
#include <vector>

namespace qrnn::sweep {
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

std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0) {
            auto colon = line.find(':');
            return colon == std::string::npos ? line : line.substr(line.find_first_not_of(' ', colon + 1));
        }
    return "unknown";
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
        m.cpu_model = cpu_model();
        m.cores = std::thread::hardware_concurrency();
        m.halide_version = QRNN_SWEEP_HALIDE_VERSION;
        m.git_commit = git_commit();
        m.environment = performance_environment();
        return m;
    }();
    return info;
}

}  // namespace qrnn::sweep
