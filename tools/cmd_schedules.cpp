// `qrnn schedules`: the registered layer schedules, their target family and tunable knobs.
#include <iostream>

#include "schedules/gemm_tuning.h"
#include "schedules/schedule.h"
#include "schedules/tuning_db.h"
#include "tools/command.h"
#include "tools/options.h"
#include "report/table.h"

namespace po = boost::program_options;

namespace qrnn::cli {
namespace {

std::string join_choices(const std::vector<int> &values) {
    std::string s;
    for (int v : values) s += (s.empty() ? "" : ",") + std::to_string(v);
    return s;
}

int schedules_command(const std::vector<std::string> &args) {
    po::options_description desc("qrnn schedules options");
    desc.add_options()("help,h", "show this help");
    po::variables_map vm;
    if (!parse_options("usage: qrnn schedules   (use one with qrnn run --schedule NAME --knob K=V)", desc, args, vm))
        return kExitOk;
    Table table({"schedule", "target", "per_shape", "knob", "default", "range", "tuning_choices", "knob_meaning"});
    for (auto &name : layer_schedule_names()) {
        const LayerSchedule &s = find_layer_schedule(name);
        std::string per_shape = s.per_shape ? "yes" : "no";
        if (s.defaults.empty()) table.add({name, s.target_family, per_shape, "-", "-", "-", "-", "-"});
        bool first = true;
        for (auto &[knob, value] : s.defaults) {
            auto spec = s.knob_specs.find(knob);
            std::string choices = spec == s.knob_specs.end() ? "-" : join_choices(spec->second.choices);
            std::string help = spec == s.knob_specs.end() ? "-" : spec->second.help;
            std::string range = spec == s.knob_specs.end()
                                    ? "-"
                                    : std::to_string(spec->second.min) + ".." + std::to_string(spec->second.max);
            table.add({first ? name : "", first ? s.target_family : "", first ? per_shape : "", knob,
                       std::to_string(value), range, choices, help});
            first = false;
        }
    }
    table.print(std::cout);
    std::cout << "\n";
    for (auto &name : layer_schedule_names()) std::cout << name << ": " << find_layer_schedule(name).description << "\n";
    const Halide::Target host = Halide::get_jit_target_from_environment();
    std::cout << "\nGEMM core on this CPU, target " << tuning_target_name(host) << " (the defaults of the tiles above; "
              << "qrnn autotune --gemm):\n  " << gemm_core_knobs(host).describe() << "\n";
    return kExitOk;
}

const bool cmd_schedules_registered = register_command({"schedules", "list layer schedules and their tunable knobs", schedules_command});
}  // namespace
}  // namespace qrnn::cli
