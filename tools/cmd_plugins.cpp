// `qrnn plugins`: every registered plugin (built-in and loaded with --plugin) with its kind, description,
// options, targets, availability, what it supports (models: passes and architecture features; the classifier:
// fronts, pools, models, passes, precision) and source.
#include <iostream>

#include "plugins/registry.h"
#include "tools/command.h"
#include "tools/options.h"
#include "report/table.h"

namespace po = boost::program_options;

namespace qrnn::cli {
namespace {
std::string kind_names() {
    std::string out;
    for (const std::string &k : plugin_kinds()) out += (out.empty() ? "" : ", ") + k;
    return out;
}

int plugins_command(const std::vector<std::string> &args) {
    po::options_description desc("qrnn plugins options (load more with --plugin FILE.so / --plugin-dir DIR)");
    desc.add_options()("help,h", "show this help")
        ("kind", po::value<std::string>()->default_value(""), ("only this kind: " + kind_names()).c_str());
    po::variables_map vm;
    if (!parse_options("usage: qrnn plugins [options]", desc, args, vm)) return kExitOk;
    Table table({"kind", "name", "targets", "status", "supports", "options", "description", "source"});
    for (auto &p : list_plugins(vm["kind"].as<std::string>()))
        table.add({p.kind, p.name, p.targets, p.status, p.supports.empty() ? "-" : p.supports, p.options, p.description, p.source});
    table.print(std::cout);
    return kExitOk;
}

const bool cmd_plugins_registered = register_command({"plugins", "list plugins: pooling variants, models, schedules, the text classifier (pQRNN)", plugins_command});
}  // namespace
}  // namespace qrnn::cli
