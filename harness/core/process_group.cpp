#include "harness/core/process_group.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

extern char** environ;

namespace nodeaudit {
namespace {

pid_t spawn_in_own_group(const std::vector<std::string>& args, const std::string& log_path) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&files, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, argv[0], &files, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&files);
  if (rc != 0) {
    errno = rc;
    return -1;
  }
  return pid;
}

void kill_group(pid_t pid, int& wait_status) {
  kill(-pid, SIGTERM);
  for (int i = 0; i < 60; ++i) {
    if (waitpid(pid, &wait_status, WNOHANG) == pid) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(-pid, SIGKILL);
  waitpid(pid, &wait_status, 0);
}

}  // namespace

GroupEnd run_in_own_group(const std::vector<std::string>& args, const std::string& log_path, double timeout_s,
                          const std::function<bool()>& should_stop, const GroupWatch& watch) {
  GroupEnd end;
  const pid_t pid = spawn_in_own_group(args, log_path);
  if (pid < 0) {
    end.start_error = fmt::format("cannot start {}: {}", args.front(), std::strerror(errno));
    return end;
  }
  end.started = true;
  const auto start = std::chrono::steady_clock::now();
  int wait_status = 0;
  while (waitpid(pid, &wait_status, WNOHANG) != pid) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    end.timed_out = elapsed > timeout_s;
    end.interrupted = !end.timed_out && should_stop && should_stop();
    if (!end.timed_out && !end.interrupted && watch)
      if (auto reason = watch()) end.stopped_because = std::move(*reason);
    if (end.timed_out || end.interrupted || !end.stopped_because.empty()) {
      kill_group(pid, wait_status);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (WIFEXITED(wait_status)) end.exit_code = WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) end.signal = WTERMSIG(wait_status);
  return end;
}

}  // namespace nodeaudit
