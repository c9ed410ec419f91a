#include "schedules/autoschedule.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <set>

#include "core/error.h"
#include "schedules/cpu_target.h"

namespace qrnn {
using namespace Halide;

void load_autoscheduler(const std::string &plugin) {
    static std::mutex mutex;
    static std::set<std::string> loaded;
    std::lock_guard<std::mutex> lock(mutex);
    if (loaded.count(plugin)) return;
    std::vector<std::string> dirs;
    if (const char *d = std::getenv("QRNN_HALIDE_PLUGIN_DIR")) dirs.push_back(d);
    dirs.push_back("/usr/lib/x86_64-linux-gnu/halide14");
    dirs.push_back("/usr/lib/halide14");
    for (auto &dir : dirs) {
        std::filesystem::path p = std::filesystem::path(dir) / ("libautoschedule_" + plugin + ".so");
        if (!std::filesystem::exists(p)) continue;
        load_plugin(p.string());
        loaded.insert(plugin);
        return;
    }
    fail("autoscheduler plugin libautoschedule_", plugin, ".so not found (set QRNN_HALIDE_PLUGIN_DIR)");
}

Pipeline build_auto_scheduled(const std::string &name, const LayerInputs &in, const PoolingVariant &variant,
                              const Target &target, const Knobs &knobs, const LayerShape &s) {
    std::string plugin = name;
    for (auto &ch : plugin) ch = static_cast<char>(std::tolower(ch));
    load_autoscheduler(plugin);
    LayerFuncs L = define_qrnn_layer(in, variant);
    const int G = variant.gate_count();
    const int T = static_cast<int>(s.T), B = static_cast<int>(s.B), n = static_cast<int>(s.n),
              m = static_cast<int>(s.m), k = static_cast<int>(s.k);
    in.set_estimates(T, B, n, m, k, G);
    L.cell.set_estimates({{0, m}, {0, B}, {0, T}});
    Pipeline p(L.outputs());
    MachineParams machine(knobs.at("parallelism"), 32u << 20, static_cast<float>(knobs.at("balance")));
    AutoSchedulerResults result = p.auto_schedule(name, target, machine);
    if (std::getenv("QRNN_PRINT_SCHEDULE")) std::cerr << result.schedule_source << "\n";
    return p;
}

LayerSchedule auto_layer_schedule(const std::string &name, const std::string &family) {
    const int cores = cpu_info().cores;
    LayerSchedule s;
    s.name = (family == "gpu" ? "cuda-auto-" : "auto-") + name;
    s.description = "Halide 14 autoscheduler " + name + " (" + family + "), estimates from the shape";
    s.target_family = family;
    s.defaults = {{"parallelism", family == "gpu" ? 128 : cores}, {"balance", 40}};
    s.knob_specs = {{"parallelism", {"MachineParams parallelism (cores, or GPU SMs x blocks)", {cores, 2 * cores, 8, 16}, 1, 4096}},
                    {"balance", {"MachineParams load/arithmetic cost balance", {10, 20, 40, 80}, 1, 1000}}};
    s.per_shape = true;
    s.build = [name](const LayerInputs &in, const PoolingVariant &v, const Target &t, const Knobs &knobs,
                     const LayerShape &shape) { return build_auto_scheduled(name, in, v, t, knobs, shape); };
    return s;
}

namespace {
const bool autoschedule_registered = [] {
    for (const char *name : {"Adams2019", "Li2018", "Mullapudi2016"}) register_layer_schedule(auto_layer_schedule(name, "cpu"));
    return true;
}();
}  // namespace
}  // namespace qrnn
