#include "harness/learn/job_guard.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/core/errors.hpp"

extern char** environ;

namespace nodeaudit::learn {

namespace fs = std::filesystem;

namespace {

constexpr const char* guardian_command = "__learn-guardian";

std::string self_exe() {
  std::error_code ec;
  const auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

pid_t spawn_guardian(const std::vector<std::string>& args, int read_fd) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // A session of its own: a hang-up of learn's terminal or a Ctrl-C there does not reach it.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &files, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&files);
  (void)read_fd;
  return rc == 0 ? pid : -1;
}

// The result learn claimed, when it still holds nothing measured (its first version).
void remove_unmeasured_result(const std::string& path) {
  if (path.empty()) return;
  std::ifstream in(path);
  try {
    const nlohmann::json doc = nlohmann::json::parse(in);
    if (doc.contains("probes") && doc["probes"].is_array() && doc["probes"].empty()) fs::remove(path);
  } catch (const std::exception&) {
  }
}

}  // namespace

JobGuard::JobGuard(const std::string& folder, const std::string& env_marker, const std::string& result_path,
                   const TreeEndWaits& waits)
    : tree_(HeldTree::make("learn", env_marker)) {
  int fds[2];
  if (pipe(fds) != 0)
    throw UsageError("learn", std::string("cannot make a pipe for the job's guardian: ") + std::strerror(errno));
  fcntl(fds[1], F_SETFD, FD_CLOEXEC);  // the job and the probes never hold it: its end is learn's end
  const std::vector<std::string> args{self_exe(),
                                      guardian_command,
                                      std::to_string(fds[0]),
                                      tree_.cgroup_dir(),
                                      env_marker,
                                      folder,
                                      result_path,
                                      fmt::format("{}", waits.after_sigint_s),
                                      fmt::format("{}", waits.after_sigterm_s)};
  guardian_ = spawn_guardian(args, fds[0]);
  close(fds[0]);
  pipe_fd_ = fds[1];
  if (guardian_ < 0) {
    close(pipe_fd_);
    throw UsageError("learn", "cannot start the guardian process that ends the job if learn is killed");
  }
  tree_.except(guardian_);
}

void JobGuard::job_started(pid_t job) {
  const std::string line = fmt::format("job {}\n", job);
  if (write(pipe_fd_, line.data(), line.size()) < 0) {
  }
}

void JobGuard::release() {
  if (pipe_fd_ < 0) return;
  if (write(pipe_fd_, "done\n", 5) < 0) {
  }
  close(pipe_fd_);
  pipe_fd_ = -1;
  waitpid(guardian_, nullptr, 0);
}

JobGuard::~JobGuard() {
  if (pipe_fd_ < 0) return;
  close(pipe_fd_);
  waitpid(guardian_, nullptr, 0);  // it ends the tree and removes the folder
}

namespace {

// Reads learn's lines until the pipe ends: the job's process group, and whether learn ended it.
void read_until_learn_ends(int fd, pid_t& job, bool& released) {
  std::string text;
  char buffer[256];
  while (true) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n > 0) {
      text.append(buffer, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  std::istringstream lines(text);
  for (std::string word; lines >> word;) {
    if (word == "job") lines >> job;
    if (word == "done") released = true;
  }
}

}  // namespace

int run_guardian(int argc, char** argv) {
  if (argc != 9) return 2;
  for (int sig : {SIGINT, SIGHUP, SIGPIPE, SIGQUIT}) signal(sig, SIG_IGN);
  const int fd = std::atoi(argv[2]);
  const std::string cgroup = argv[3], marker = argv[4], folder = argv[5], result = argv[6];
  const TreeEndWaits waits{std::atof(argv[7]), std::atof(argv[8])};
  pid_t job = 0;
  bool released = false;
  read_until_learn_ends(fd, job, released);
  HeldTree tree = HeldTree::adopt(cgroup, marker);
  if (released) return 0;
  const std::size_t processes = tree.members().size();
  const TreeEnd end = end_tree(tree, job, waits, {});
  tree.remove_cgroup();
  std::error_code ec;
  if (!folder.empty()) fs::remove_all(folder, ec);
  remove_unmeasured_result(result);
  if (processes > 0)
    std::fprintf(stderr,
                 "nodeaudit: learn ended while its job ran: the job's %zu process(es) were ended (%s); removed %s\n",
                 processes, describe_tree_end(end, waits).c_str(), folder.c_str());
  return 0;
}

}  // namespace nodeaudit::learn
