// Subcommands of the `qrnn` CLI register themselves here; main() dispatches on the first argument.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace qrnn::cli {

struct Command {
    std::string name;
    std::string summary;
    std::function<int(const std::vector<std::string> &args)> run;  // args after the command name
};

bool register_command(Command command);
const std::vector<Command> &commands();

// Exit codes shared by every command.
// kExitUnavailable: nothing ran because every requested model is unavailable here (e.g. no CUDA device).
constexpr int kExitOk = 0, kExitCheckFailed = 1, kExitBadInput = 2, kExitUnavailable = 3;

}  // namespace qrnn::cli
