#include "harness/node/procfs.hpp"

#include <cctype>
#include <fstream>
#include <sstream>

namespace nodeaudit::procfs {

std::map<std::string, unsigned long long> read_meminfo(const std::string& path) {
  std::map<std::string, unsigned long long> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key, unit_text;
    unsigned long long value = 0;
    if (!(fields >> key >> value)) continue;
    if (!key.empty() && key.back() == ':') key.pop_back();
    fields >> unit_text;
    out[key] = unit_text == "kB" ? value * 1024ULL : value;
  }
  return out;
}

std::map<std::string, CpuTimes> read_cpu_times(const std::string& path) {
  std::map<std::string, CpuTimes> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cpu", 0) != 0) continue;
    std::istringstream fields(line);
    std::string name;
    CpuTimes t;
    fields >> name >> t.user >> t.nice >> t.system >> t.idle >> t.iowait >> t.irq >> t.softirq >> t.steal;
    out[name] = t;
  }
  return out;
}

std::optional<double> busy_pct(const CpuTimes& before, const CpuTimes& after) {
  if (after.total() <= before.total()) return std::nullopt;
  const double total = static_cast<double>(after.total() - before.total());
  return 100.0 * static_cast<double>(after.busy() - before.busy()) / total;
}

std::optional<double> iowait_pct(const CpuTimes& before, const CpuTimes& after) {
  if (after.total() <= before.total()) return std::nullopt;
  const double total = static_cast<double>(after.total() - before.total());
  return 100.0 * static_cast<double>(after.iowait - before.iowait) / total;
}

namespace {
// Whole disks only: sda, vda, nvme0n1, md0, dm-0 — not sda1 or nvme0n1p1.
bool is_partition(const std::string& name) {
  if (name.rfind("nvme", 0) == 0 || name.rfind("mmcblk", 0) == 0) return name.find('p', 4) != std::string::npos;
  if (name.rfind("loop", 0) == 0 || name.rfind("ram", 0) == 0) return true;  // not storage under test
  if (name.rfind("dm-", 0) == 0 || name.rfind("md", 0) == 0) return false;
  return !name.empty() && std::isdigit(static_cast<unsigned char>(name.back()));
}
}  // namespace

std::map<std::string, DiskCounters> read_diskstats(const std::string& path) {
  std::map<std::string, DiskCounters> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    unsigned major = 0, minor = 0;
    std::string name;
    unsigned long long reads = 0, reads_merged = 0, sectors_read = 0, ms_reading = 0;
    unsigned long long writes = 0, writes_merged = 0, sectors_written = 0;
    if (!(fields >> major >> minor >> name >> reads >> reads_merged >> sectors_read >> ms_reading >> writes >>
          writes_merged >> sectors_written))
      continue;
    if (is_partition(name)) continue;
    out[name] = DiskCounters{sectors_read, sectors_written};
  }
  return out;
}

std::map<std::string, NetCounters> read_netdev(const std::string& path) {
  std::map<std::string, NetCounters> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    name.erase(0, name.find_first_not_of(' '));
    std::istringstream fields(line.substr(colon + 1));
    NetCounters c;
    unsigned long long skip = 0;
    fields >> c.rx_bytes;
    for (int i = 0; i < 7; ++i) fields >> skip;
    fields >> c.tx_bytes;
    if (fields) out[name] = c;
  }
  return out;
}

std::optional<std::string> read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  const auto end = line.find_last_not_of(" \t\r\n");
  return end == std::string::npos ? std::string() : line.substr(0, end + 1);
}

}  // namespace nodeaudit::procfs
