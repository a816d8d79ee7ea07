// host.config rules on CPU frequency, memory and kernel settings (see config_rules.hpp).
#include "hostconfig/config_rules.hpp"

#include <sys/resource.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "harness/core/units.hpp"
#include "harness/node/procfs.hpp"

namespace nodeaudit::host {

Finding info(std::string code, std::string message) { return {Severity::info, std::move(code), std::move(message)}; }
Finding warn(std::string code, std::string message) { return {Severity::warn, std::move(code), std::move(message)}; }

namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t shm_broken_below_bytes = 256ull << 20;  // the 64 MiB container default lies below
constexpr std::uint64_t shm_expected_bytes = 1ull << 30;        // NGC containers are started with --shm-size=1g

std::string size_text(std::uint64_t bytes) { return format_bytes(static_cast<double>(bytes)); }

}  // namespace

std::optional<std::string> selected_choice(const std::string& text) {
  const auto open = text.find('['), close = text.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  return text.substr(open + 1, close - open - 1);
}

Finding check_cpu_governor(const std::string& cpu_dir, const ContainerInfo& container) {
  const std::string where = cpu_dir + "/cpuN/cpufreq/scaling_governor";
  std::map<std::string, int> by_governor;
  int cpus = 0;
  std::error_code ec;
  static const std::regex cpu_name("cpu[0-9]+");
  for (const auto& entry : fs::directory_iterator(cpu_dir, ec)) {
    if (!std::regex_match(entry.path().filename().string(), cpu_name)) continue;
    if (auto g = procfs::read_first_line((entry.path() / "cpufreq" / "scaling_governor").string())) ++by_governor[*g], ++cpus;
  }
  if (cpus == 0 && container.detected)
    return info("host_config.governor", fmt::format("not judged (in a container: {} shows no frequency governor, and the host's "
                                                    "is not visible from here; run `cpupower frequency-info` on the host); expected 'performance'",
                                                    where));
  if (cpus == 0)
    return info("host_config.governor", fmt::format("no CPU exposes a frequency governor ({} not readable; cpufreq is often hidden in VMs): "
                                                    "not judged; expected 'performance'", where));
  const int performance = by_governor.count("performance") ? by_governor["performance"] : 0;
  if (performance == cpus)
    return info("host_config.governor", fmt::format("all {} CPUs use the 'performance' governor (read {}); expected 'performance'", cpus, where));
  std::string tally;
  for (const auto& [governor, n] : by_governor) tally += fmt::format("{}{} '{}'", tally.empty() ? "" : ", ", n, governor);
  return warn("host_config.governor",
              fmt::format("{} of {} CPUs do not use the 'performance' governor ({}; read {}); expected 'performance' on every CPU: "
                          "other governors drop the clock between bursts, which slows decoding and kernel launches",
                          cpus - performance, cpus, tally, where));
}

Finding check_transparent_hugepages(const std::string& thp_dir) {
  const auto enabled_line = procfs::read_first_line(thp_dir + "/enabled");
  const auto defrag_line = procfs::read_first_line(thp_dir + "/defrag");
  const auto enabled = enabled_line ? selected_choice(*enabled_line) : std::nullopt;
  const auto defrag = defrag_line ? selected_choice(*defrag_line) : std::nullopt;
  if (!enabled) return info("host_config.thp", fmt::format("{}/enabled not readable (kernel without transparent huge pages): not judged", thp_dir));
  const std::string read = fmt::format("enabled '{}', defrag '{}' (read {}/enabled and /defrag)", *enabled, defrag.value_or("unknown"), thp_dir);
  const std::string expected = "expected enabled 'madvise' or 'always' with defrag not 'always'";
  if (*enabled == "never")
    return warn("host_config.thp", fmt::format("transparent huge pages are off: {}; {}: with 4 KiB pages only, large loader and "
                                               "staging buffers take many more TLB misses", read, expected));
  if (defrag && *defrag == "always")
    return warn("host_config.thp", fmt::format("{}; {}: defrag 'always' makes page faults wait for memory compaction, "
                                               "which shows up as stalls in allocation-heavy data loaders", read, expected));
  return info("host_config.thp", fmt::format("transparent huge pages: {}; {}", read, expected));
}

Finding check_swap(const std::string& swaps_path) {
  std::ifstream in(swaps_path);
  if (!in) return info("host_config.swap", fmt::format("{} not readable: not judged; expected no active swap", swaps_path));
  std::string line;
  std::getline(in, line);  // header: Filename Type Size Used Priority
  std::vector<std::string> devices;
  std::uint64_t total_bytes = 0;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string name, type;
    std::uint64_t size_kib = 0;
    if (!(fields >> name >> type >> size_kib)) continue;
    devices.push_back(name);
    total_bytes += size_kib * 1024;
  }
  if (devices.empty()) return info("host_config.swap", fmt::format("no active swap (read {}); expected none on a training node", swaps_path));
  std::string names;
  for (const auto& d : devices) names += (names.empty() ? "" : ", ") + d;
  return warn("host_config.swap",
              fmt::format("swap is on: {} device(s), {} ({}; read {}); expected none on a training node: a job that outgrows "
                          "RAM then slows to disk speed instead of failing fast, and loader memory can be paged out",
                          devices.size(), size_text(total_bytes), names, swaps_path));
}

Finding judge_shm_size(const std::string& shm_path, std::optional<std::uint64_t> size_bytes, const std::string& error) {
  const std::string expected = fmt::format("expected at least {} (NGC containers run with --shm-size=1g or --ipc=host)", size_text(shm_expected_bytes));
  if (!size_bytes)
    return warn("host_config.shm", fmt::format("statvfs({}) failed: {}; {}: multi-worker data loaders pass batches through it", shm_path, error, expected));
  const std::string read = fmt::format("{} is {} (statvfs)", shm_path, size_text(*size_bytes));
  if (*size_bytes < shm_broken_below_bytes)
    return {Severity::fail, "host_config.shm",
            fmt::format("{}; {}: PyTorch DataLoader workers hand batches over in shared memory, and the 64 MiB container "
                        "default makes them die with 'bus error' / 'insufficient shared memory'", read, expected)};
  if (*size_bytes < shm_expected_bytes)
    return warn("host_config.shm", fmt::format("{}; {}: several loader workers with prefetched batches can exhaust it", read, expected));
  return info("host_config.shm", fmt::format("{}; {}", read, expected));
}

Finding check_shm(const std::string& shm_path) {
  struct statvfs st {};
  if (statvfs(shm_path.c_str(), &st) != 0) return judge_shm_size(shm_path, std::nullopt, std::strerror(errno));
  return judge_shm_size(shm_path, static_cast<std::uint64_t>(st.f_blocks) * st.f_frsize, "");
}

Finding judge_memlock(std::optional<std::uint64_t> soft_limit_bytes, std::optional<std::uint64_t> ram_bytes) {
  const std::string expected = "expected unlimited (NGC containers run with --ulimit memlock=-1)";
  if (!soft_limit_bytes) return info("host_config.memlock", fmt::format("ulimit -l is unlimited (getrlimit RLIMIT_MEMLOCK, soft limit); {}", expected));
  const std::string read = fmt::format("ulimit -l is {} (getrlimit RLIMIT_MEMLOCK, soft limit)", size_text(*soft_limit_bytes));
  if (ram_bytes && *soft_limit_bytes >= *ram_bytes)
    return info("host_config.memlock", fmt::format("{}, at least the host RAM ({}); {}", read, size_text(*ram_bytes), expected));
  return warn("host_config.memlock",
              fmt::format("{}; {}: RDMA memory registration (NCCL over InfiniBand/RoCE, GPUDirect RDMA) and mlock()ed "
                          "staging buffers count against it and fail or fall back to slower paths beyond it", read, expected));
}

Finding check_memlock(const std::string& meminfo_path) {
  struct rlimit limit {};
  const auto meminfo = procfs::read_meminfo(meminfo_path);
  const auto ram = meminfo.count("MemTotal") ? std::optional<std::uint64_t>(meminfo.at("MemTotal")) : std::nullopt;
  if (getrlimit(RLIMIT_MEMLOCK, &limit) != 0)
    return info("host_config.memlock", fmt::format("getrlimit(RLIMIT_MEMLOCK) failed: {}: not judged", std::strerror(errno)));
  return judge_memlock(limit.rlim_cur == RLIM_INFINITY ? std::nullopt : std::optional<std::uint64_t>(limit.rlim_cur), ram);
}

Finding check_numa_balancing(const std::string& path) {
  const auto value = procfs::read_first_line(path);
  if (!value) return info("host_config.numa_balancing", fmt::format("{} not readable (kernel without automatic NUMA balancing): not judged", path));
  if (*value == "0") return info("host_config.numa_balancing", fmt::format("automatic NUMA balancing is off ({} = 0); expected 0", path));
  return warn("host_config.numa_balancing",
              fmt::format("automatic NUMA balancing is on ({} = {}); expected 0: the kernel unmaps pages to sample where they are "
                          "used and migrates them, adding page-fault stalls to loader threads and host buffers",
                          path, *value));
}

}  // namespace nodeaudit::host
