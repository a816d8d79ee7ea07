// `learn --vary cpus=1,2,..`: the job's whole process tree (its ranks, DataLoader workers, anything
// they start) confined to N CPUs for one run. By a cgroup cpuset where one can be made here (cgroup
// v1's cpuset hierarchy, or v2's cpuset controller): the job cannot leave it. Otherwise by CPU
// affinity (taskset), which every process the job starts inherits but could change. `how()` says
// which; the report and the result carry it.
#pragma once

#include <string>
#include <vector>

namespace nodeaudit::learn {

class CpuConfinement {
 public:
  // Checks every value against the CPUs this process may use and chooses the mechanism; throws
  // UsageError (nothing made) for a value above them, or where neither mechanism is permitted.
  explicit CpuConfinement(const std::vector<std::string>& values);
  ~CpuConfinement();  // removes the cgroups it made (and any an earlier, killed learn left empty)
  CpuConfinement(const CpuConfinement&) = delete;
  CpuConfinement& operator=(const CpuConfinement&) = delete;

  // The command that runs `command` on the first `value` CPUs this process may use.
  std::vector<std::string> command_at(const std::string& value, const std::vector<std::string>& command) const;
  const std::string& how() const { return how_; }

 private:
  std::vector<int> allowed_;           // the CPUs this process may use, in order
  std::vector<std::string> cgroups_;   // one per value, when by cgroup
  std::vector<std::string> values_;
  std::string how_;
};

}  // namespace nodeaudit::learn
