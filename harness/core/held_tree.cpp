#include "harness/core/held_tree.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include <fmt/format.h>

namespace nodeaudit {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* cgroup_root = "/sys/fs/cgroup";
constexpr const char* cgroup_prefix = "nodeaudit-";

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// This process's own cgroup in a v1 hierarchy ("freezer" -> "/user.slice"), from /proc/self/cgroup.
std::optional<std::string> own_cgroup(const std::string& controller) {
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);) {
    const auto first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    std::stringstream controllers(line.substr(first + 1, second - first - 1));
    for (std::string c; std::getline(controllers, c, ',');)
      if (c == controller) return line.substr(second + 1);
  }
  return std::nullopt;
}

char process_state(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string line;
  if (!std::getline(in, line)) return '?';
  const auto close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() ? '?' : line[close + 2];
}

pid_t parent_of(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string line;
  if (!std::getline(in, line)) return 0;
  const auto close = line.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(line.substr(close + 2));
  char state = 0;
  pid_t ppid = 0;
  rest >> state >> ppid;
  return ppid;
}

bool environment_holds(pid_t pid, const std::string& marker) {
  std::ifstream in(fmt::format("/proc/{}/environ", pid), std::ios::binary);
  for (std::string entry; std::getline(in, entry, '\0');)
    if (entry == marker) return true;
  return false;
}

std::vector<pid_t> all_pids() {
  std::vector<pid_t> pids;
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit)) pids.push_back(std::stoi(name));
  }
  return pids;
}

// Processes whose environment holds `marker`, and this process's descendants (orphans of the tree
// come to it as the subreaper).
std::vector<pid_t> swept_members(const std::string& marker) {
  const pid_t self = getpid();
  std::vector<pid_t> found;
  for (const pid_t pid : all_pids()) {
    if (pid == self) continue;
    bool descendant = false;
    for (pid_t p = parent_of(pid), hops = 0; p > 1 && hops < 64; p = parent_of(p), ++hops)
      if (p == self) descendant = true;
    if (descendant || (!marker.empty() && environment_holds(pid, marker))) found.push_back(pid);
  }
  return found;
}

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

// Empty cgroups a nodeaudit process that is gone left under `parent` ("nodeaudit-learn-PID-...").
void remove_abandoned_cgroups(const fs::path& parent) {
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(cgroup_prefix, 0) != 0) continue;
    const auto dash = name.rfind('-');
    const auto before = name.rfind('-', dash - 1);
    if (dash == std::string::npos || before == std::string::npos) continue;
    const pid_t owner = static_cast<pid_t>(std::atol(name.substr(before + 1, dash - before - 1).c_str()));
    if (owner > 0 && kill(owner, 0) != 0 && errno == ESRCH) rmdir(it->path().c_str());  // fails while a member lives
  }
}

}  // namespace

HeldTree::HeldTree(std::string cgroup_dir, std::string env_marker, int procs_fd)
    : cgroup_dir_(std::move(cgroup_dir)), env_marker_(std::move(env_marker)), procs_fd_(procs_fd) {}

HeldTree::HeldTree(HeldTree&& other) noexcept
    : cgroup_dir_(std::move(other.cgroup_dir_)),
      env_marker_(std::move(other.env_marker_)),
      procs_fd_(other.procs_fd_),
      except_(std::move(other.except_)) {
  other.procs_fd_ = -1;
  other.cgroup_dir_.clear();
}

HeldTree HeldTree::make(const std::string& name, const std::string& env_marker) {
  static int serial = 0;
  for (const char* controller : {"freezer", "pids"}) {
    const auto own = own_cgroup(controller);
    if (!own) continue;
    const fs::path parent = fs::path(cgroup_root) / controller / fs::path(*own).relative_path();
    remove_abandoned_cgroups(parent);
    const fs::path dir = parent / fmt::format("{}{}-{}-{}", cgroup_prefix, name, getpid(), ++serial);
    if (mkdir(dir.c_str(), 0755) != 0) continue;
    const int fd = open((dir / "cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
    if (fd >= 0) return HeldTree(dir.string(), env_marker, fd);
    rmdir(dir.c_str());
  }
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  return HeldTree("", env_marker, -1);
}

HeldTree HeldTree::adopt(const std::string& cgroup_dir, const std::string& env_marker) {
  return HeldTree(cgroup_dir, env_marker, -1);
}

HeldTree::~HeldTree() {
  if (procs_fd_ >= 0) close(procs_fd_);
  remove_cgroup();
}

std::string HeldTree::mechanism() const {
  if (!cgroup_dir_.empty()) return "cgroup v1 " + cgroup_dir_;
  return "no cgroup could be made here: this process as child subreaper, and the processes whose environment holds " +
         env_marker_;
}

bool HeldTree::join_in_forked_child() const {
  if (procs_fd_ < 0) return false;
  // No allocation between fork and exec: the pid is written with digits of our own.
  char digits[24];
  int n = 0;
  for (long long pid = getpid(); pid > 0; pid /= 10) digits[n++] = static_cast<char>('0' + pid % 10);
  char text[24];
  for (int i = 0; i < n; ++i) text[i] = digits[n - 1 - i];
  return write(procs_fd_, text, static_cast<std::size_t>(n)) == n;
}

std::vector<pid_t> HeldTree::members() const {
  std::vector<pid_t> found;
  if (!cgroup_dir_.empty()) {
    std::ifstream in(fs::path(cgroup_dir_) / "cgroup.procs");
    for (pid_t pid = 0; in >> pid;) found.push_back(pid);
  } else {
    found = swept_members(env_marker_);
  }
  std::vector<pid_t> live;
  for (const pid_t pid : found)
    if (std::find(except_.begin(), except_.end(), pid) == except_.end() && process_state(pid) != 'Z' &&
        process_state(pid) != '?')
      live.push_back(pid);
  return live;
}

void HeldTree::signal_members(int sig) const {
  for (const pid_t pid : members()) kill(pid, sig);
}

void HeldTree::kill_all() const {
  const bool freezer = cgroup_dir_.find("/freezer/") != std::string::npos;
  const std::string state = (fs::path(cgroup_dir_) / "freezer.state").string();
  if (freezer) write_text(state, "FROZEN");
  // Frozen, no member can fork; a SIGKILL is delivered when the group thaws.
  for (int round = 0; round < 3; ++round) signal_members(SIGKILL);
  if (freezer) write_text(state, "THAWED");
}

bool HeldTree::remove_cgroup() {
  if (cgroup_dir_.empty()) return true;
  if (rmdir(cgroup_dir_.c_str()) == 0 || errno == ENOENT) {
    cgroup_dir_.clear();
    return true;
  }
  return false;
}

TreeEnd end_tree(const HeldTree& tree, pid_t group, const TreeEndWaits& waits, const std::function<void()>& reap) {
  TreeEnd end;
  const auto start = Clock::now();
  auto gone_within = [&](double wait_s) {
    const auto stage = Clock::now();
    do {
      if (reap) reap();
      if (tree.empty()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    } while (since(stage) < wait_s);
    return false;
  };
  if (reap) reap();
  if (!tree.empty()) {
    end.signals.push_back("SIGINT");
    // As Ctrl-C in a terminal: to the foreground group; a launcher passes it on to its workers.
    if (group <= 0 || kill(-group, SIGINT) != 0) tree.signal_members(SIGINT);
    if (!gone_within(waits.after_sigint_s)) {
      end.signals.push_back("SIGTERM");
      tree.signal_members(SIGTERM);
      if (!gone_within(waits.after_sigterm_s)) {
        end.signals.push_back("SIGKILL");
        end.killed = tree.members().size();
        do tree.kill_all();
        while (!gone_within(1));
      }
    }
  }
  end.took_s = since(start);
  return end;
}

std::string describe_tree_end(const TreeEnd& end, const TreeEndWaits& waits) {
  if (end.signals.empty()) return "it had ended by itself";
  std::string out = "SIGINT";
  if (end.signals.size() > 1) out += fmt::format(", then SIGTERM after {:.0f} s", waits.after_sigint_s);
  if (end.signals.size() > 2)
    out += fmt::format(", then SIGKILL after {:.0f} s more ({} process{})", waits.after_sigterm_s, end.killed,
                       end.killed == 1 ? "" : "es");
  return out + fmt::format("; gone {:.1f} s after the first signal", end.took_s);
}

}  // namespace nodeaudit
