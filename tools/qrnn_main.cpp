// `qrnn <command> [options]`: the framework's command line.
#include <H5Cpp.h>

#include <cstdlib>
#include <iostream>

#include "core/error.h"
#include "plugins/loader.h"
#include "runtime/timing.h"
#include "schedules/cpu_target.h"
#include "tools/command.h"

namespace qrnn::cli {
static std::vector<Command> &mutable_commands() {
    static std::vector<Command> all;
    return all;
}
bool register_command(Command command) {
    mutable_commands().push_back(std::move(command));
    return true;
}
const std::vector<Command> &commands() { return mutable_commands(); }
}  // namespace qrnn::cli

// Global plugin options, valid before or after the command name: --plugin FILE.so (repeatable) and
// --plugin-dir DIR (every *.so in it), plus the directories of $QRNN_PLUGIN_PATH. Removed from args.
static std::vector<std::string> load_plugins(const std::vector<std::string> &args) {
    qrnn::load_plugin_path_from_env();
    std::vector<std::string> rest;
    for (size_t i = 0; i < args.size(); i++) {
        const std::string &a = args[i];
        std::string option = a.substr(0, a.find('=')), value;
        if (option != "--plugin" && option != "--plugin-dir") {
            rest.push_back(a);
            continue;
        }
        if (a.size() > option.size()) value = a.substr(option.size() + 1);
        else if (i + 1 < args.size()) value = args[++i];
        else qrnn::fail(option, " needs a value");
        if (option == "--plugin") qrnn::load_plugin(value);
        else qrnn::load_plugin_dir(value);
    }
    return rest;
}

static void usage(std::ostream &os) {
    os << "usage: qrnn <command> [options]   (qrnn <command> --help for its options)\n"
       << "global options: --plugin FILE.so (repeatable), --plugin-dir DIR; env QRNN_PLUGIN_PATH=DIR:DIR\n"
       << "\ncommands:\n";
    for (auto &c : qrnn::cli::commands()) os << "  " << c.name << std::string(12 - std::min<size_t>(c.name.size(), 11), ' ') << c.summary << "\n";
}

int main(int argc, char **argv) {
    using namespace qrnn::cli;
    qrnn::default_openmp_wait_policy(argv);
    // HL_JIT_TARGET below AVX-512 (the AVX2 path on a newer CPU) holds oneDNN's LSTM to the same ISA.
    qrnn::hold_references_to(Halide::get_jit_target_from_environment());
    std::vector<std::string> args;
    try {
        args = load_plugins(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const std::exception &e) {
        std::cerr << "qrnn: error: " << e.what() << "\n";
        return kExitBadInput;
    } catch (...) {
        std::cerr << "qrnn: error: loading plugins failed with a non-standard exception\n";
        return kExitBadInput;
    }
    if (args.empty()) {
        usage(std::cerr);
        return kExitBadInput;
    }
    std::string name = args[0];
    if (name == "--help" || name == "-h" || name == "help") {
        usage(std::cout);
        return kExitOk;
    }
    for (auto &c : commands()) {
        if (c.name != name) continue;
        try {
            return c.run(std::vector<std::string>(args.begin() + 1, args.end()));
        } catch (const std::exception &e) {
            std::cerr << "qrnn " << name << ": error: " << e.what() << "\n";
            return kExitBadInput;
        } catch (const H5::Exception &e) {  // a safety net: HDF5 errors are meant to become qrnn::Error where they occur
            std::cerr << "qrnn " << name << ": error: HDF5: " << e.getFuncName() << ": " << e.getDetailMsg() << "\n";
            return kExitBadInput;
        } catch (...) {
            std::cerr << "qrnn " << name << ": error: unexpected non-standard exception\n";
            return kExitBadInput;
        }
    }
    std::cerr << "qrnn: unknown command '" << name << "'\n";
    usage(std::cerr);
    return kExitBadInput;
}
