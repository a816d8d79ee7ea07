#include "harness/node/env.hpp"

#include <hwloc.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "harness/core/registry.hpp"
#include "harness/core/units.hpp"
#include "harness/node/container.hpp"
#include "harness/node/nvml.hpp"
#include "harness/node/procfs.hpp"

namespace nodeaudit {
namespace {

std::string cpuset_text(hwloc_const_bitmap_t set) {
  char* text = nullptr;
  hwloc_bitmap_list_asprintf(&text, set);
  std::string out = text ? text : "";
  free(text);
  return out;
}

nlohmann::json collect_topology() {
  nlohmann::json host;
  hwloc_topology_t topo = nullptr;
  if (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0) {
    host["topology_error"] = "hwloc could not load the topology";
    return host;
  }
  hwloc_obj_t package = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
  const char* model = package ? hwloc_obj_get_info_by_name(package, "CPUModel") : nullptr;
  host["cpu_model"] = model ? model : "unknown";
  host["sockets"] = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
  host["cores"] = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  host["threads"] = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  nlohmann::json numa = nlohmann::json::array();
  const int nodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < nodes; ++i) {
    hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
    numa.push_back({{"node", node->os_index},
                    {"cpus", cpuset_text(node->cpuset)},
                    {"memory_bytes", node->attr ? node->attr->numanode.local_memory : 0}});
  }
  host["numa"] = numa;
  // The last-level cache size sizes the host memory-bandwidth buffers.
  unsigned long long llc_bytes = 0;
  for (hwloc_obj_type_t type : {HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE}) {
    const int n = hwloc_get_nbobjs_by_type(topo, type);
    for (int i = 0; i < n && llc_bytes == 0; ++i) {
      hwloc_obj_t c = hwloc_get_obj_by_type(topo, type, static_cast<unsigned>(i));
      if (c->attr) llc_bytes = c->attr->cache.size * static_cast<unsigned long long>(n);
    }
    if (llc_bytes) break;
  }
  host["llc_total_bytes"] = llc_bytes;
  hwloc_topology_destroy(topo);
  return host;
}

std::string os_pretty_name() {
  std::ifstream in("/etc/os-release");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      std::string v = line.substr(12);
      if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
      return v;
    }
  }
  return "unknown";
}

nlohmann::json collect_gpus(const Nvml& nvml, nlohmann::json& env) {
  nlohmann::json gpus = nlohmann::json::array();
  if (!nvml.available()) {
    env["gpu_status"] = nvml.why_unavailable();
    return gpus;
  }
  const int n = nvml.device_count();
  env["gpu_status"] = n == 0 ? std::string("NVIDIA driver present but no GPU found") : fmt::format("{} GPUs", n);
  for (int i = 0; i < n; ++i) {
    const NvmlDeviceInfo d = nvml.device_info(i);
    nlohmann::json g = {{"index", i}, {"name", d.name}, {"uuid", d.uuid}, {"pci_bus_id", d.pci_bus_id}, {"serial", d.serial}};
    auto put = [&g](const char* key, const auto& opt) {
      if (opt) g[key] = *opt;
    };
    if (!d.vbios_version.empty()) g["vbios_version"] = d.vbios_version;
    put("memory_total_bytes", d.memory_total_bytes);
    put("numa_node", d.numa_node);
    if (!d.cpu_numa_nodes.empty()) g["cpu_numa_nodes"] = d.cpu_numa_nodes;
    put("pcie_gen_current", d.pcie_gen_current);
    put("pcie_gen_max", d.pcie_gen_max);
    put("pcie_width_current", d.pcie_width_current);
    put("pcie_width_max", d.pcie_width_max);
    put("persistence_mode", d.persistence_mode);
    put("ecc_enabled", d.ecc_enabled);
    put("mig_enabled", d.mig_enabled);
    put("sm_clock_max_mhz", d.sm_clock_max_mhz);
    put("power_limit_w", d.power_limit_w);
    put("power_limit_default_w", d.power_limit_default_w);
    gpus.push_back(g);
  }
  if (auto v = nvml.driver_version()) env["software"]["driver"] = *v;
  if (auto v = nvml.cuda_driver_version()) env["software"]["cuda_driver"] = *v;
  return gpus;
}

// CPUs this process may run on (sched_getaffinity): a container's --cpuset-cpus, taskset, Slurm.
int affinity_cpu_count() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
}

std::string limit_text(const nlohmann::json& c) {
  const nlohmann::json cpu = c.value("cpu_limit", nlohmann::json(nullptr)), memory = c.value("memory_limit_bytes", nlohmann::json(nullptr));
  std::string out = cpu.is_number() ? fmt::format("CPU limit {:.2f} ({})", cpu.get<double>(), c.value("cpu_limit_source", "")) : "no CPU limit";
  out += memory.is_number() ? fmt::format(", memory limit {} ({})", format_bytes(memory.get<double>()), c.value("memory_limit_source", ""))
                            : ", no memory limit";
  return out + fmt::format("; a job here gets {} cores, {}", c.value("usable_cores", 0), format_bytes(c.value("usable_ram_bytes", 0.0)));
}

// One line when in a container or under a cgroup limit; nothing on a plain host, so its output is unchanged.
std::string render_container(const nlohmann::json& c) {
  const bool limited = c.value("cpu_limit", nlohmann::json(nullptr)).is_number() || c.value("memory_limit_bytes", nlohmann::json(nullptr)).is_number();
  if (c.value("detected", false)) {
    std::string evidence;
    for (const auto& e : c.value("evidence", nlohmann::json::array())) evidence += (evidence.empty() ? "" : "; ") + e.get<std::string>();
    return fmt::format("container {} ({}): {}\n", c.value("runtime", "unknown"), evidence, limit_text(c));
  }
  return limited ? fmt::format("cgroup    {}\n", limit_text(c)) : "";
}

}  // namespace

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown-host";
  return buf;
}

// The BIOS and board identity from DMI (world-readable in sysfs), so a fleet report can list
// firmware drift; a file that is absent or empty (a VM, a container without /sys) adds nothing.
void add_firmware_strings(nlohmann::json& host, const std::string& dmi_dir) {
  for (const char* key : {"bios_vendor", "bios_version", "bios_date", "board_vendor", "board_name", "product_name"}) {
    std::ifstream in(dmi_dir + "/" + key);
    std::string value;
    if (!std::getline(in, value)) continue;
    while (!value.empty() && (value.back() == ' ' || value.back() == '\r')) value.pop_back();
    if (!value.empty()) host[key] = value;
  }
}

PathStorage describe_path_storage(const std::string& path, const std::string& mountinfo) {
  PathStorage out;
  struct statvfs vfs {};
  if (statvfs(path.c_str(), &vfs) == 0) {
    out.free_bytes = static_cast<unsigned long long>(vfs.f_bavail) * vfs.f_frsize;
    out.total_bytes = static_cast<unsigned long long>(vfs.f_blocks) * vfs.f_frsize;
  }
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return out;
  const std::string dev = fmt::format("{}:{}", major(st.st_dev), minor(st.st_dev));
  // mountinfo: id parent major:minor root mount-point options ... - fstype source super-options
  std::ifstream in(mountinfo);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string id, parent, majmin, root, mount_point;
    f >> id >> parent >> majmin >> root >> mount_point;
    if (majmin != dev) continue;
    const auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream tail(line.substr(dash + 3));
    tail >> out.filesystem >> out.device;
    out.mount_point = mount_point;
    break;
  }
  return out;
}

nlohmann::json collect_env(const std::string& data_dir, const Nvml& nvml) {
  nlohmann::json env;
  nlohmann::json host = collect_topology();
  host["hostname"] = host_name();
  const auto mem = procfs::read_meminfo();
  host["ram_total_bytes"] = mem.count("MemTotal") ? mem.at("MemTotal") : 0;
  host["ram_available_bytes"] = mem.count("MemAvailable") ? mem.at("MemAvailable") : 0;
  struct utsname u {};
  if (uname(&u) == 0) host["kernel"] = u.release;
  host["os"] = os_pretty_name();
  add_firmware_strings(host);
  env["host"] = host;
  const ContainerInfo container = detect_container();
  env["container"] = container_json(container, host.value("cores", 0), affinity_cpu_count(), host.value("ram_total_bytes", 0ull));
  if (!data_dir.empty()) {
    const PathStorage s = describe_path_storage(data_dir);
    env["data_dir"] = {{"path", data_dir}, {"filesystem", s.filesystem}, {"device", s.device},
                       {"mount_point", s.mount_point}, {"free_bytes", s.free_bytes},
                       {"on_container_layer", container.detected && on_container_layer(data_dir)}};
  }
  env["software"] = nlohmann::json::object();
  env["gpus"] = collect_gpus(nvml, env);
  for (EnvContributor contribute : env_contributors()) contribute(env);
  return env;
}

int gpu_count(const nlohmann::json& env) {
  return env.contains("gpus") && env["gpus"].is_array() ? static_cast<int>(env["gpus"].size()) : 0;
}

std::string render_env(const nlohmann::json& env) {
  const auto& h = env.at("host");
  std::string out;
  out += fmt::format("host      {}  ({}, kernel {})\n", h.value("hostname", "?"), h.value("os", "?"), h.value("kernel", "?"));
  out += fmt::format("cpu       {}: {} sockets, {} cores, {} threads\n", h.value("cpu_model", "?"), h.value("sockets", 0),
                     h.value("cores", 0), h.value("threads", 0));
  const nlohmann::json numa = h.value("numa", nlohmann::json::array());
  for (const auto& n : numa)
    out += fmt::format("numa {}    cpus {}, {}\n", n.value("node", 0), n.value("cpus", ""),
                       format_bytes(n.value("memory_bytes", 0.0)));
  out += fmt::format("memory    {} total, {} available\n", format_bytes(h.value("ram_total_bytes", 0.0)),
                     format_bytes(h.value("ram_available_bytes", 0.0)));
  if (env.contains("container")) out += render_container(env["container"]);
  if (env.contains("data_dir")) {
    const auto& d = env["data_dir"];
    out += fmt::format("data-dir  {} on {} ({}), {} free\n", d.value("path", ""), d.value("device", "?"),
                       d.value("filesystem", "?"), format_bytes(d.value("free_bytes", 0.0)));
    if (d.value("on_container_layer", false))
      out += "warning   the data dir is on the container's own writable layer (overlay), not a mount: storage probes measure "
             "the overlay, not the storage under test; bind-mount a directory of that storage (-v /mnt/nvme/audit:/data)\n";
  }
  out += fmt::format("gpus      {}\n", env.value("gpu_status", "unknown"));
  const nlohmann::json gpus = env.value("gpus", nlohmann::json::array());
  for (const auto& g : gpus) {
    out += fmt::format("gpu {}     {} {} {}, PCIe gen {}/{} x{}/{}\n", g.value("index", 0), g.value("name", "?"),
                       g.value("pci_bus_id", ""), format_bytes(g.value("memory_total_bytes", 0.0)),
                       g.value("pcie_gen_current", 0), g.value("pcie_gen_max", 0), g.value("pcie_width_current", 0),
                       g.value("pcie_width_max", 0));
  }
  // Keep the object alive for the loop: items() refers into it.
  const nlohmann::json software = env.value("software", nlohmann::json::object());
  for (const auto& [key, value] : software.items())
    out += fmt::format("{:<9} {}\n", key, value.is_string() ? value.get<std::string>() : value.dump());
  return out;
}

}  // namespace nodeaudit
