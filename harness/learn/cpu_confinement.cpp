#include "harness/learn/cpu_confinement.hpp"

#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core/errors.hpp"

namespace nodeaudit::learn {

namespace fs = std::filesystem;

namespace {

constexpr const char* cgroup_prefix = "nodeaudit-learn-cpus-";

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

std::string cpu_list(const std::vector<int>& cpus, std::size_t count) {
  return fmt::format("{}", fmt::join(std::vector<int>(cpus.begin(), cpus.begin() + static_cast<std::ptrdiff_t>(count)), ","));
}

bool write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

std::string read_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// cgroup v1's cpuset hierarchy, or the v2 root when it offers the cpuset controller to children.
fs::path cpuset_root() {
  std::error_code ec;
  if (fs::exists("/sys/fs/cgroup/cpuset/cpuset.cpus", ec)) return "/sys/fs/cgroup/cpuset";
  if (read_line("/sys/fs/cgroup/cgroup.subtree_control").find("cpuset") != std::string::npos) return "/sys/fs/cgroup";
  return {};
}

// Groups an earlier learn made and could not remove (it was killed): the pid in the name is gone.
void remove_abandoned(const fs::path& root) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(cgroup_prefix, 0) != 0) continue;
    const int pid = std::atoi(name.c_str() + std::char_traits<char>::length(cgroup_prefix));
    if (pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH)) continue;
    fs::remove(entry.path(), ec);  // rmdir: refused while a process is still in it
  }
}

}  // namespace

CpuConfinement::CpuConfinement(const std::vector<std::string>& values) : allowed_(allowed_cpus()), values_(values) {
  for (const auto& value : values) {
    const int count = std::atoi(value.c_str());
    if (count < 1 || static_cast<std::size_t>(count) > allowed_.size())
      throw UsageError("--vary cpus=" + value, fmt::format("this machine lets learn use {} CPUs ({}); give values from 1 to {}", allowed_.size(),
                                                           cpu_list(allowed_, allowed_.size()), allowed_.size()));
  }
  const fs::path root = cpuset_root();
  if (!root.empty() && access(root.c_str(), W_OK) == 0) {
    remove_abandoned(root);
    const std::string mems = read_line(root / "cpuset.mems").empty() ? read_line(root / "cpuset.mems.effective") : read_line(root / "cpuset.mems");
    bool made = true;
    for (const auto& value : values) {
      const fs::path dir = root / fmt::format("{}{}-{}", cgroup_prefix, getpid(), value);
      std::error_code ec;
      made = fs::create_directory(dir, ec) && write_text(dir / "cpuset.mems", mems) &&
             write_text(dir / "cpuset.cpus", cpu_list(allowed_, static_cast<std::size_t>(std::atoi(value.c_str()))));
      if (ec || fs::exists(dir, ec)) cgroups_.push_back(dir.string());
      if (!made) break;
    }
    if (made) {
      how_ = fmt::format("a cgroup cpuset ({}) per value, holding the job's whole process tree", root.string());
      return;
    }
    for (const auto& dir : cgroups_) fs::remove(dir);
    cgroups_.clear();
  }
  std::error_code ec;
  const bool taskset = fs::exists("/usr/bin/taskset", ec) || fs::exists("/bin/taskset", ec);
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : allowed_) CPU_SET(cpu, &set);
  if (!taskset || sched_setaffinity(0, sizeof set, &set) != 0)
    throw UsageError("--vary cpus", "neither a cgroup cpuset can be made here (run as root on a machine with the cpuset "
                                    "controller) nor CPU affinity set (taskset from util-linux, sched_setaffinity permitted)");
  how_ = "CPU affinity (taskset), inherited by every process the job starts; a cgroup cpuset could not be made here";
}

CpuConfinement::~CpuConfinement() {
  for (const auto& dir : cgroups_) {
    std::error_code ec;
    // The job's last processes may take a moment to leave; rmdir is refused until they have.
    for (int attempt = 0; attempt < 50 && fs::exists(dir, ec) && !fs::remove(dir, ec); ++attempt) usleep(100 * 1000);
  }
}

std::vector<std::string> CpuConfinement::command_at(const std::string& value, const std::vector<std::string>& command) const {
  std::vector<std::string> out;
  const auto at = std::find(values_.begin(), values_.end(), value);
  if (!cgroups_.empty() && at != values_.end()) {
    // The shell enters the group, then becomes the job: every process it starts is in the group.
    out = {"/bin/sh", "-c", "echo $$ > \"$0\" && exec \"$@\"", cgroups_[static_cast<std::size_t>(at - values_.begin())] + "/cgroup.procs"};
  } else {
    out = {"taskset", "-c", cpu_list(allowed_, static_cast<std::size_t>(std::atoi(value.c_str())))};
  }
  out.insert(out.end(), command.begin(), command.end());
  return out;
}

}  // namespace nodeaudit::learn
