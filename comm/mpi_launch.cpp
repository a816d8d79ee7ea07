#include "comm/mpi_launch.hpp"

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "comm/rank_stream.hpp"
#include "harness/node/mpi_env.hpp"

namespace nodeaudit::comm {
namespace {

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// The launcher's last words for an error message, without rank 0's report stream (rank_stream.hpp).
std::string tail_of_file(const std::string& path, std::size_t max_chars) {
  std::ifstream in(path);
  std::string text;
  for (std::string line; std::getline(in, line);)
    if (line.find(report_line_prefix) == std::string::npos && line.find(progress_line_text) == std::string::npos)
      text += line + "\n";
  if (text.size() > max_chars) text = "..." + text.substr(text.size() - max_chars);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

}  // namespace

std::optional<int> env_int(const EnvLookup& env, const char* name) { return env_whole_number(env(name)); }

std::optional<MpiJobInfo> detect_mpi_job(const EnvLookup& env) {
  struct Names {
    const char *rank, *size, *local_rank;
  };
  const Names families[] = {{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
                            {"PMIX_RANK", "PMIX_SIZE", "PMIX_LOCAL_RANK"},
                            {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"}};
  for (const Names& n : families) {
    const auto rank = env_int(env, n.rank);
    if (!rank) continue;
    MpiJobInfo info;
    info.rank = *rank;
    info.size = env_int(env, n.size).value_or(0);  // 0: unknown until MPI_Init says
    info.local_rank = env_int(env, n.local_rank).value_or(0);
    return info;
  }
  return std::nullopt;
}

bool is_isolated_run_child(const std::vector<std::string>& own_argv) {
  for (const auto& a : own_argv)
    if (a == "--child-out") return true;
  return false;
}

std::vector<std::string> read_own_argv() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  for (std::string arg; std::getline(in, arg, '\0');) args.push_back(arg);
  return args;
}

std::vector<std::string> launch_command(const LaunchPlan& plan) {
  std::vector<std::string> args = {plan.mpirun};
  if (plan.as_root) args.push_back("--allow-run-as-root");
  // Loopback runs of more ranks than cores are the CI case; on real nodes it costs nothing.
  args.push_back("--oversubscribe");
  if (!plan.hostfile.empty()) args.insert(args.end(), {"--hostfile", plan.hostfile});
  if (plan.ranks > 0) args.insert(args.end(), {"-np", std::to_string(plan.ranks)});
  args.insert(args.end(), {"-x", std::string(rank_report_env) + "=stdout"});
  for (auto& w : split_words(plan.extra_args)) args.push_back(w);
  args.insert(args.end(), {plan.self_exe, "probe", plan.probe_id, "--level", plan.level});
  for (const auto& [name, value] : plan.params) args.insert(args.end(), {"--" + name, value});
  return args;
}

std::vector<std::string> hostfile_hosts(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> hosts;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line.substr(0, line.find('#')));
    std::string host;
    if (words >> host && std::find(hosts.begin(), hosts.end(), host) == hosts.end()) hosts.push_back(host);
  }
  return hosts;
}

std::optional<std::string> hostfile_problem(const std::string& path) {
  std::ifstream in(path);
  if (!in) return fmt::format("--hostfile {}: cannot be read ({})", path, std::strerror(errno));
  int line_number = 0, hosts = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string host;
    if (!(words >> host)) continue;
    ++hosts;
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
    if (found) freeaddrinfo(found);
    if (rc != 0)
      return fmt::format("--hostfile {}: host '{}' (line {}) does not resolve ({}); expected one host name or address "
                         "per line, as mpirun's hostfile", path, host, line_number, gai_strerror(rc));
  }
  if (hosts == 0) return fmt::format("--hostfile {}: names no host; expected one host name or address per line", path);
  return std::nullopt;
}

LaunchEnd run_launcher(const std::vector<std::string>& args, const std::string& log_path, double timeout_s,
                       const std::function<bool()>& should_stop, const LaunchWatch& watch) {
  LaunchEnd end{run_in_own_group(args, log_path, timeout_s, should_stop, watch), ""};
  end.log_tail = tail_of_file(log_path, 1500);
  return end;
}

std::optional<DeadRank> dead_rank_in(const std::string& launcher_output) {
  static const std::regex by_signal(R"(process rank (\d+) with PID \d+ on node (\S+) exited on signal (\d+)(?: \(([^)]*)\))?)");
  static const std::regex by_exit(R"(Process name:\s*\[\[\d+,\d+\],(\d+)\]\s*Exit code:\s*(\d+))");
  std::smatch m;
  if (std::regex_search(launcher_output, m, by_signal)) {
    const std::string name = m[4].matched ? fmt::format(" ({})", m[4].str()) : "";
    return DeadRank{std::stoi(m[1]), m[2], fmt::format("was killed by signal {}{}", m[3].str(), name)};
  }
  if (std::regex_search(launcher_output, m, by_exit))
    return DeadRank{std::stoi(m[1]), "", fmt::format("exited with code {}", m[2].str())};
  return std::nullopt;
}

std::string describe(const DeadRank& dead) {
  return fmt::format("rank {}{} {}", dead.rank, dead.host.empty() ? "" : " on " + dead.host, dead.how);
}

std::string describe_failed_launch(const LaunchEnd& end, double timeout_s) {
  if (!end.started) return end.start_error;
  std::string what;
  if (!end.stopped_because.empty()) what = end.stopped_because;
  else if (end.timed_out) what = fmt::format("the ranks did not finish within {:.0f} s (a rank hung or died); killed them", timeout_s);
  else if (end.interrupted) what = "interrupted; the ranks were stopped";
  else if (end.signal) what = fmt::format("the launcher was killed by signal {}", end.signal);
  else what = fmt::format("the launcher exited with code {} and rank 0 left no report", end.exit_code);
  return end.log_tail.empty() ? what : what + "; launcher output: " + end.log_tail;
}

}  // namespace nodeaudit::comm
