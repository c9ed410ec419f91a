// `qrnn <command> [options]`: the framework's command line.
#include <iostream>

#include "core/error.h"
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

static void usage(std::ostream &os) {
    os << "usage: qrnn <command> [options]   (qrnn <command> --help for its options)\n\ncommands:\n";
    for (auto &c : qrnn::cli::commands()) os << "  " << c.name << std::string(12 - std::min<size_t>(c.name.size(), 11), ' ') << c.summary << "\n";
}

int main(int argc, char **argv) {
    using namespace qrnn::cli;
    if (argc < 2) {
        usage(std::cerr);
        return kExitBadInput;
    }
    std::string name = argv[1];
    if (name == "--help" || name == "-h" || name == "help") {
        usage(std::cout);
        return kExitOk;
    }
    for (auto &c : commands()) {
        if (c.name != name) continue;
        try {
            return c.run(std::vector<std::string>(argv + 2, argv + argc));
        } catch (const qrnn::Error &e) {
            std::cerr << "qrnn " << name << ": error: " << e.what() << "\n";
            return kExitBadInput;
        } catch (const std::exception &e) {
            std::cerr << "qrnn " << name << ": error: " << e.what() << "\n";
            return kExitBadInput;
        }
    }
    std::cerr << "qrnn: unknown command '" << name << "'\n";
    usage(std::cerr);
    return kExitBadInput;
}
