// Container detection and cgroup limits (see container.hpp).
#include "harness/node/container.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "harness/node/procfs.hpp"

namespace nodeaudit {
namespace {

namespace fs = std::filesystem;

// v1 reports "no limit" as the largest page-aligned signed 64-bit value; anything this large is none.
constexpr std::uint64_t unlimited_from_bytes = 1ull << 60;

std::optional<std::uint64_t> parse_unsigned(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  try {
    return std::stoull(text);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

struct CgroupLine {
  std::string controllers, path;
};

// /proc/self/cgroup: "hierarchy-id:controller,list:/path"; v2's line has an empty controller list.
std::vector<CgroupLine> read_cgroup_lines(const std::string& file) {
  std::vector<CgroupLine> lines;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    const auto first = line.find(':');
    const auto second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    lines.push_back({line.substr(first + 1, second - first - 1), line.substr(second + 1)});
  }
  return lines;
}

bool has_controller(const std::string& list, const std::string& name) {
  std::istringstream items(list);
  std::string item;
  while (std::getline(items, item, ','))
    if (item == name) return true;
  return false;
}

// The cgroup's directory and its ancestors up to the mount, leaf first. A path that is not visible
// (a container without its own cgroup namespace sees the host's path) falls back to the mount itself,
// which then is the container's cgroup.
std::vector<fs::path> cgroup_dirs(const fs::path& mount, const std::string& cgroup_path) {
  std::vector<fs::path> dirs;
  std::error_code ec;
  fs::path leaf = mount / fs::path(cgroup_path).relative_path();
  if (!fs::is_directory(leaf, ec)) leaf = mount;
  for (fs::path dir = leaf;; dir = dir.parent_path()) {
    dirs.push_back(dir);
    if (dir == mount || !dir.has_relative_path() || dir.parent_path() == dir) break;
  }
  return dirs;
}

template <typename T>
void keep_tightest(std::optional<T> value, const fs::path& file, std::optional<T>& limit, std::string& source) {
  if (value && (!limit || *value < *limit)) {
    limit = value;
    source = file.string();
  }
}

void read_v2(const ContainerPaths& paths, const std::string& cgroup_path, CgroupLimits& limits) {
  for (const fs::path& dir : cgroup_dirs(paths.cgroup_root, cgroup_path)) {
    if (auto text = procfs::read_first_line((dir / "cpu.max").string()))
      keep_tightest(parse_cpu_max(*text), dir / "cpu.max", limits.cpu_limit, limits.cpu_limit_source);
    if (auto text = procfs::read_first_line((dir / "memory.max").string()))
      keep_tightest(parse_memory_limit(*text), dir / "memory.max", limits.memory_limit_bytes, limits.memory_limit_source);
  }
}

// v1 mounts each controller on its own ("cpu", "cpu,cpuacct"); the first that exists is used.
std::optional<fs::path> v1_mount(const fs::path& root, const std::vector<std::string>& names) {
  std::error_code ec;
  for (const auto& name : names)
    if (fs::is_directory(root / name, ec)) return root / name;
  return std::nullopt;
}

void read_v1(const ContainerPaths& paths, const std::vector<CgroupLine>& lines, CgroupLimits& limits) {
  std::string cpu_path = "/", memory_path = "/";
  for (const auto& l : lines) {
    if (has_controller(l.controllers, "cpu")) cpu_path = l.path;
    if (has_controller(l.controllers, "memory")) memory_path = l.path;
  }
  if (auto mount = v1_mount(paths.cgroup_root, {"cpu,cpuacct", "cpu"}))
    for (const fs::path& dir : cgroup_dirs(*mount, cpu_path)) {
      const auto quota = procfs::read_first_line((dir / "cpu.cfs_quota_us").string());
      const auto period = procfs::read_first_line((dir / "cpu.cfs_period_us").string());
      if (quota && period) keep_tightest(parse_cfs_quota(*quota, *period), dir / "cpu.cfs_quota_us", limits.cpu_limit, limits.cpu_limit_source);
    }
  if (auto mount = v1_mount(paths.cgroup_root, {"memory"}))
    for (const fs::path& dir : cgroup_dirs(*mount, memory_path))
      if (auto text = procfs::read_first_line((dir / "memory.limit_in_bytes").string()))
        keep_tightest(parse_memory_limit(*text), dir / "memory.limit_in_bytes", limits.memory_limit_bytes, limits.memory_limit_source);
}

// Engines leave their name in the cgroup path when the container has no cgroup namespace of its own.
std::string runtime_in_cgroup_path(const std::string& path) {
  static const std::pair<const char*, const char*> markers[] = {
      {"kubepods", "kubernetes"}, {"libpod", "podman"}, {"docker", "docker"}, {"crio", "cri-o"}, {"containerd", "containerd"}, {"lxc", "lxc"}};
  for (const auto& [marker, runtime] : markers)
    if (path.find(marker) != std::string::npos) return runtime;
  return "";
}

bool exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

}  // namespace

std::optional<double> parse_cpu_max(const std::string& text) {
  std::istringstream fields(text);
  std::string quota, period;
  if (!(fields >> quota >> period) || quota == "max") return std::nullopt;
  const auto q = parse_unsigned(quota), p = parse_unsigned(period);
  if (!q || !p || *p == 0) return std::nullopt;
  return static_cast<double>(*q) / static_cast<double>(*p);
}

std::optional<std::uint64_t> parse_memory_limit(const std::string& text) {
  const auto value = parse_unsigned(text);
  if (!value || *value >= unlimited_from_bytes) return std::nullopt;
  return value;
}

std::optional<double> parse_cfs_quota(const std::string& quota_text, const std::string& period_text) {
  const auto quota = parse_unsigned(quota_text), period = parse_unsigned(period_text);  // "-1" is not unsigned: none
  if (!quota || !period || *period == 0) return std::nullopt;
  return static_cast<double>(*quota) / static_cast<double>(*period);
}

CgroupLimits read_cgroup_limits(const ContainerPaths& paths) {
  CgroupLimits limits;
  const std::vector<CgroupLine> lines = read_cgroup_lines(paths.self_cgroup);
  if (exists((fs::path(paths.cgroup_root) / "cgroup.controllers").string())) {
    limits.version = "v2";
    std::string path = "/";
    for (const auto& l : lines)
      if (l.controllers.empty()) path = l.path;
    read_v2(paths, path, limits);
  } else if (v1_mount(paths.cgroup_root, {"cpu,cpuacct", "cpu", "memory"})) {
    // Also the hybrid layout (v1 controllers, an empty v2 tree under unified/): the limits are v1's.
    limits.version = "v1";
    read_v1(paths, lines, limits);
  }
  return limits;
}

ContainerInfo detect_container(const ContainerPaths& paths) {
  ContainerInfo info;
  auto found = [&info](const std::string& runtime, std::string evidence) {
    if (info.runtime.empty() || info.runtime == "unknown") info.runtime = runtime;
    info.evidence.push_back(std::move(evidence));
  };
  if (paths.read_environment) {
    // Kubernetes first: a pod's engine (containerd, CRI-O) matters less than who scheduled it.
    if (const char* k8s = std::getenv("KUBERNETES_SERVICE_HOST"); k8s && *k8s)
      found("kubernetes", "KUBERNETES_SERVICE_HOST is set (a Kubernetes pod)");
    if (const char* engine = std::getenv("container"); engine && *engine) found(engine, fmt::format("container={} is set", engine));
  }
  if (exists(paths.containerenv)) found("podman", paths.containerenv + " exists");
  if (exists(paths.dockerenv)) found("docker", paths.dockerenv + " exists");
  for (const auto& line : read_cgroup_lines(paths.self_cgroup))
    if (const std::string runtime = runtime_in_cgroup_path(line.path); !runtime.empty()) {
      found(runtime, fmt::format("cgroup path {} names {} (read {})", line.path, runtime, paths.self_cgroup));
      break;
    }
  info.detected = !info.evidence.empty();
  if (!info.detected) info.runtime = "";
  info.limits = read_cgroup_limits(paths);
  return info;
}

int usable_cores(int host_cores, int allowed_cpus, std::optional<double> cpu_limit) {
  int cores = allowed_cpus > 0 ? std::min(host_cores, allowed_cpus) : host_cores;
  if (cpu_limit) cores = std::min(cores, std::max(1, static_cast<int>(std::floor(*cpu_limit))));
  return cores;
}

std::uint64_t usable_ram_bytes(std::uint64_t host_ram_bytes, std::optional<std::uint64_t> memory_limit_bytes) {
  return memory_limit_bytes ? std::min(host_ram_bytes, *memory_limit_bytes) : host_ram_bytes;
}

bool on_container_layer(const std::string& path, const std::string& mountinfo) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return false;
  const std::string dev = fmt::format("{}:{}", major(st.st_dev), minor(st.st_dev));
  // mountinfo: id parent major:minor root mount-point options ... - fstype source super-options.
  // The last mount of the device wins, as it does for path lookup.
  std::ifstream in(mountinfo);
  std::string line, mount_point, fstype;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string id, parent, majmin, root, point;
    f >> id >> parent >> majmin >> root >> point;
    const auto dash = line.find(" - ");
    if (majmin != dev || dash == std::string::npos) continue;
    std::istringstream tail(line.substr(dash + 3));
    tail >> fstype;
    mount_point = point;
  }
  return mount_point == "/" && (fstype == "overlay" || fstype == "fuse.fuse-overlayfs" || fstype == "aufs");
}

nlohmann::json container_json(const ContainerInfo& info, int host_cores, int allowed_cpus, std::uint64_t host_ram_bytes) {
  const CgroupLimits& l = info.limits;
  nlohmann::json j = {{"detected", info.detected},
                      {"runtime", info.runtime},
                      {"evidence", info.evidence},
                      {"cgroup", l.version},
                      {"cpu_limit", l.cpu_limit ? nlohmann::json(*l.cpu_limit) : nlohmann::json(nullptr)},
                      {"cpu_limit_source", l.cpu_limit_source},
                      {"memory_limit_bytes", l.memory_limit_bytes ? nlohmann::json(*l.memory_limit_bytes) : nlohmann::json(nullptr)},
                      {"memory_limit_source", l.memory_limit_source},
                      {"cpus_allowed", allowed_cpus},
                      {"usable_cores", usable_cores(host_cores, allowed_cpus, l.cpu_limit)},
                      {"usable_ram_bytes", usable_ram_bytes(host_ram_bytes, l.memory_limit_bytes)}};
  return j;
}

}  // namespace nodeaudit
