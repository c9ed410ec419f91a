#include "runtime/run_program.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

extern char **environ;

namespace qrnn {

ProgramResult run_program(const std::vector<std::string> &argv, bool with_stderr) {
    ProgramResult r;
    int fds[2];
    if (argv.empty() || ::pipe2(fds, O_CLOEXEC) != 0) return r;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    if (with_stderr)
        posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
    else
        posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    std::vector<char *> args;
    for (const std::string &a : argv) args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    char buf[4096];
    ssize_t got;
    while (spawned == 0 && ((got = ::read(fds[0], buf, sizeof buf)) > 0 || (got < 0 && errno == EINTR)))
        if (got > 0) r.output.append(buf, static_cast<size_t>(got));
    ::close(fds[0]);
    if (spawned != 0) {
        r.exit_code = 127;  // as a shell reports a command it cannot run
        return r;
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.started = r.exit_code != 127;
    return r;
}

}  // namespace qrnn
