#include "harness/watch/process_stats.hpp"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace nodeaudit::watch {

std::optional<ProcessCounters> read_process(int pid, const std::string& proc_root) {
  const std::string dir = proc_root + "/" + std::to_string(pid);
  std::ifstream stat(dir + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return std::nullopt;
  // The command name may hold spaces and parentheses; the fields resume after the last ')'.
  const auto close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(close + 1));
  std::vector<std::string> f;
  for (std::string tok; fields >> tok && f.size() < 13;) f.push_back(tok);
  if (f.size() < 13) return std::nullopt;
  if (f[0] == "Z" || f[0] == "X") return std::nullopt;  // exited, waiting to be reaped: no longer running
  ProcessCounters c;
  try {
    c.parent = std::stoi(f[1]);
    c.cpu_ticks = std::stoull(f[11]) + std::stoull(f[12]);  // fields 14 (utime) and 15 (stime)
  } catch (const std::exception&) {
    return std::nullopt;
  }
  std::ifstream io(dir + "/io");
  for (std::string key; io >> key;) {
    unsigned long long value = 0;
    if (!(io >> value)) break;
    if (key == "read_bytes:") c.read_bytes = value;
    if (key == "write_bytes:") c.write_bytes = value;
  }
  return c;
}

std::optional<double> tree_resident_bytes(const std::map<int, ProcessCounters>& tree, const std::string& proc_root) {
  double total = 0;
  bool any = false;
  for (const auto& [pid, counters] : tree) {
    std::ifstream rollup(proc_root + "/" + std::to_string(pid) + "/smaps_rollup");
    for (std::string line; std::getline(rollup, line);) {
      const bool anon = line.rfind("Pss_Anon:", 0) == 0, shmem = line.rfind("Pss_Shmem:", 0) == 0;
      if (!anon && !shmem) continue;
      std::istringstream fields(line.substr(line.find(':') + 1));
      double kib = 0;
      if (fields >> kib && kib >= 0) total += kib * 1024, any = true;
    }
  }
  return any ? std::optional<double>(total) : std::nullopt;
}

bool process_exists(int pid, const std::string& proc_root) {
  return pid > 0 && read_process(pid, proc_root).has_value();
}

std::map<int, ProcessCounters> read_process_tree(int pid, const std::string& proc_root) {
  std::map<int, ProcessCounters> all;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(proc_root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    const int p = std::atoi(name.c_str());
    if (auto c = read_process(p, proc_root)) all[p] = *c;
  }
  std::map<int, ProcessCounters> tree;
  if (!all.count(pid)) return tree;
  std::vector<int> frontier{pid};
  tree[pid] = all[pid];
  while (!frontier.empty()) {
    const int parent = frontier.back();
    frontier.pop_back();
    for (const auto& [p, c] : all)
      if (c.parent == parent && !tree.count(p)) tree[p] = c, frontier.push_back(p);
  }
  return tree;
}

ProcessRates process_rates(const std::map<int, ProcessCounters>& before, const std::map<int, ProcessCounters>& after,
                           double dt_s, double ticks_per_s) {
  ProcessRates r;
  r.processes = after.size();
  if (dt_s <= 0 || ticks_per_s <= 0) return r;
  double ticks = 0, read = 0, written = 0;
  bool io_known = false;
  for (const auto& [pid, now] : after) {
    auto it = before.find(pid);
    if (it == before.end()) continue;
    const ProcessCounters& was = it->second;
    if (now.cpu_ticks >= was.cpu_ticks) ticks += static_cast<double>(now.cpu_ticks - was.cpu_ticks);
    if (now.read_bytes && was.read_bytes && now.write_bytes && was.write_bytes) {
      io_known = true;
      if (*now.read_bytes >= *was.read_bytes) read += static_cast<double>(*now.read_bytes - *was.read_bytes);
      if (*now.write_bytes >= *was.write_bytes) written += static_cast<double>(*now.write_bytes - *was.write_bytes);
    }
  }
  r.cpu_pct = 100.0 * ticks / ticks_per_s / dt_s;
  if (io_known) r.read_bytes_per_s = read / dt_s, r.write_bytes_per_s = written / dt_s;
  return r;
}

}  // namespace nodeaudit::watch
