#include "tests/support/cli_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace nodeaudit::proc {
namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool printed(const std::string& text, const std::string& out_path, const std::string& err_path) {
  return slurp(out_path).find(text) != std::string::npos || slurp(err_path).find(text) != std::string::npos;
}

bool condition_met(const Trigger& when, const std::string& out_path, const std::string& err_path) {
  if (!when.file_exists.empty() && !std::filesystem::exists(when.file_exists)) return false;
  if (!when.output_contains.empty() && !printed(when.output_contains, out_path, err_path)) return false;
  return true;
}

// Polls until the condition holds or the child exits; true when the condition was seen.
bool wait_for(pid_t pid, const Trigger& when, const std::string& out_path, const std::string& err_path, int& status,
              bool& exited) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::duration<double>(when.give_up_after_s);
  while (std::chrono::steady_clock::now() < give_up) {
    if (condition_met(when, out_path, err_path)) return true;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// In the forked child, before exec: streams, environment and limits as `setup` asks.
void prepare_child(const ChildSetup& setup, const std::string& out_path, const std::string& err_path) {
  const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int err = setup.stderr_into_stdout ? out : open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int in = open(setup.stdin_path.empty() ? "/dev/null" : setup.stdin_path.c_str(), O_RDONLY);
  dup2(in, 0), dup2(out, 1), dup2(err, 2);
  for (const auto& [name, value] : setup.environment) setenv(name.c_str(), value.c_str(), 1);
  if (setup.file_size_limit_bytes) {
    signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{*setup.file_size_limit_bytes, *setup.file_size_limit_bytes};
    setrlimit(RLIMIT_FSIZE, &limit);
  }
}
}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, std::optional<Trigger> trigger) {
  return run_process(argv, ChildSetup{}, std::move(trigger));
}

ProcessResult run_process(const std::vector<std::string>& argv, const ChildSetup& setup,
                          std::optional<Trigger> trigger) {
  const std::string dir = make_temp_dir("proc");
  const std::string out_path = dir + "/out", err_path = dir + "/err";
  const pid_t pid = fork();
  if (pid == 0) {
    prepare_child(setup, out_path, err_path);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  ProcessResult r;
  int status = 0;
  bool exited = false;
  if (trigger) {
    r.trigger_seen = wait_for(pid, *trigger, out_path, err_path, status, exited);
    if (r.trigger_seen) std::this_thread::sleep_for(std::chrono::duration<double>(trigger->then_after_s));
    if (!exited) trigger->action ? trigger->action(pid) : void(kill(pid, SIGINT));
  }
  if (!exited) waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out_path);
  if (!setup.stderr_into_stdout) r.err = slurp(err_path);
  std::filesystem::remove_all(dir);
  return r;
}

std::string make_temp_dir(const std::string& tag) {
  std::string pattern = (std::filesystem::temp_directory_path() / ("nodeaudit-test-" + tag + "-XXXXXX")).string();
  return mkdtemp(pattern.data());
}

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().string());
  return out;
}

}  // namespace nodeaudit::proc
