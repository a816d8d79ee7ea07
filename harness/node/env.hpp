// The environment fingerprint: what this node is, recorded in every result and by `nodeaudit env`.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace nodeaudit {

class Nvml;

// Host part (hwloc topology, memory, kernel, OS), the data directory's file system and device when
// `data_dir` is not empty, GPUs from NVML, and software versions from the env contributors.
nlohmann::json collect_env(const std::string& data_dir, const Nvml& nvml);

// File system type name and backing block device of a path ("ext4", "/dev/nvme0n1p2").
struct PathStorage {
  std::string filesystem, device, mount_point;
  unsigned long long free_bytes = 0, total_bytes = 0;
};
PathStorage describe_path_storage(const std::string& path, const std::string& mountinfo = "/proc/self/mountinfo");

std::string host_name();
// host.bios_vendor, bios_version, bios_date, board_vendor, board_name, product_name from the DMI
// files in `dmi_dir`; an absent or empty file adds nothing. No serial number is read.
void add_firmware_strings(nlohmann::json& host, const std::string& dmi_dir = "/sys/class/dmi/id");
// The number of GPUs the env found, 0 when none.
int gpu_count(const nlohmann::json& env);

// Human-readable lines of the fingerprint, for `nodeaudit env` and the head of `nodeaudit run`.
std::string render_env(const nlohmann::json& env);

}  // namespace nodeaudit
