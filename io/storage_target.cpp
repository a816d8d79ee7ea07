#include "io/storage_target.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <linux/magic.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "harness/core/units.hpp"
#include "harness/node/procfs.hpp"

namespace nodeaudit::io {
namespace fs = std::filesystem;

namespace {

bool is_inside(const fs::path& child, const fs::path& parent) {
  std::error_code ec;
  const fs::path c = fs::weakly_canonical(child, ec), p = fs::weakly_canonical(parent, ec);
  auto mismatch = std::mismatch(p.begin(), p.end(), c.begin(), c.end());
  return mismatch.first == p.end();
}

// A block device's size is the ioctl's, never st_size (0 for a device node). Empty on success;
// else why it could not be read (a device node whose device is absent, a sandbox refusing the open).
std::string block_device_bytes(const std::string& path, std::uint64_t& bytes) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fmt::format("cannot open the block device read-only: {}", std::strerror(errno));
  const int rc = ioctl(fd, BLKGETSIZE64, &bytes);
  const int saved = errno;
  close(fd);
  if (rc != 0) return fmt::format("cannot read the block device's size (BLKGETSIZE64): {}", std::strerror(saved));
  if (bytes == 0) return "the block device has no capacity (0 bytes; a loop device with no file attached?)";
  return {};
}

// The kernel's own file systems: no storage under them, and files cannot be created there (root
// passes the permission checks, so only the file system's type tells).
const char* pseudo_file_system(const std::string& dir) {
  struct statfs sf {};
  if (statfs(dir.c_str(), &sf) != 0) return nullptr;
  switch (static_cast<unsigned long>(sf.f_type)) {
    case PROC_SUPER_MAGIC: return "proc";
    case SYSFS_MAGIC: return "sysfs";
    case DEBUGFS_MAGIC: return "debugfs";
    case CGROUP2_SUPER_MAGIC: return "cgroup2";
    case CGROUP_SUPER_MAGIC: return "cgroup";
    default: return nullptr;
  }
}

// Empty when files can be created in `dir`; else why not, in words that name the fix.
// A probe that writes (storage.checkpoint) is offered no read-only way out.
std::string directory_write_problem(const std::string& dir, bool write_probe) {
  if (const char* kind = pseudo_file_system(dir))
    return fmt::format("is on {}, a kernel file system with no storage under it; nodeaudit creates its test files in the "
                       "directory it is given: give a writable directory on the storage under test", kind);
  struct statvfs sv{};
  const bool read_only = (statvfs(dir.c_str(), &sv) == 0 && (sv.f_flag & ST_RDONLY) != 0) ||
                         (access(dir.c_str(), W_OK | X_OK) != 0 && errno == EROFS);
  if (read_only)
    return std::string("read-only file system; nodeaudit creates its test files in the directory it is given: give a writable "
                       "directory on the storage under test") +
           (write_probe ? " (this probe writes: it needs one)" : ", or --path FILE|DEVICE to read without writing");
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    return fmt::format("directory is not writable ({}); nodeaudit creates its test files there", std::strerror(errno));
  return {};
}

}  // namespace

std::function<std::string(const ParamValues&, const RunSettings&)> places_check(bool write_probe, bool has_path_param) {
  return [=](const ParamValues& params, const RunSettings& settings) {
    const TargetOrReason t = resolve_target(has_path_param ? params.text("path") : std::string(), settings.data_dir, write_probe);
    return t.target || t.skip ? std::string() : t.reason;
  };
}

TargetOrReason resolve_target(const std::string& path_param, const std::string& data_dir, bool write_probe) {
  TargetOrReason out;
  const std::string path = path_param.empty() ? data_dir : path_param;
  const std::string option = path_param.empty() ? "--data-dir " : "--path ";
  if (path.empty()) {
    out.skip = true;
    out.reason = "needs --path or --data-dir (a directory on the storage under test)";
    return out;
  }
  struct stat st{};
  if (stat(path.c_str(), &st) != 0) {
    out.reason = fmt::format("{}{}: {}", option, path, std::strerror(errno));
    return out;
  }
  StorageTarget t{path, TargetKind::directory, 0};
  if (S_ISBLK(st.st_mode)) t.kind = TargetKind::block_device;
  else if (S_ISREG(st.st_mode)) t.kind = TargetKind::file, t.size_bytes = static_cast<std::uint64_t>(st.st_size);
  else if (!S_ISDIR(st.st_mode)) {
    out.reason = fmt::format("{}{}: not a file, directory or block device", option, path);
    return out;
  }
  // Every probe given a directory creates its files there (storage.read its test file), so a
  // directory must take writes whatever the probe then does with them.
  if (t.kind == TargetKind::directory) {
    if (std::string why = directory_write_problem(path, write_probe); !why.empty()) {
      out.reason = fmt::format("{}{}: {}", option, path, why);
      return out;
    }
  }
  if (write_probe) {
    if (t.kind == TargetKind::block_device) {
      out.reason = fmt::format("{}{}: is a block device; this probe writes and nodeaudit never writes to a block device; give a directory on it", option, path);
      return out;
    }
    if (t.kind != TargetKind::directory) {
      out.reason = fmt::format("{}{}: is a file; this probe writes its own files and needs a directory", option, path);
      return out;
    }
    if (!path_param.empty() && !data_dir.empty() && !is_inside(path_param, data_dir)) {
      out.reason = fmt::format("--path {}: is outside --data-dir {}; nodeaudit writes only inside --data-dir", path_param, data_dir);
      return out;
    }
  }
  // Read-only probes read a block device as fio does; its size comes from the device itself.
  if (t.kind == TargetKind::block_device) {
    if (std::string why = block_device_bytes(path, t.size_bytes); !why.empty()) {
      out.reason = fmt::format("{}{}: {}", option, path, why);
      return out;
    }
  }
  out.target = t;
  return out;
}

std::uint32_t logical_block_size(const std::string& path) {
  struct stat st{};
  if (stat(path.c_str(), &st) != 0) return 512;
  if (S_ISBLK(st.st_mode)) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    int size = 0;
    if (fd >= 0) {
      if (ioctl(fd, BLKSSZGET, &size) != 0) size = 0;
      close(fd);
    }
    return size > 0 ? static_cast<std::uint32_t>(size) : 512;
  }
  const std::string dev = fmt::format("/sys/dev/block/{}:{}", major(st.st_dev), minor(st.st_dev));
  // A partition has no queue/ of its own; its parent disk does.
  for (const char* rel : {"/queue/logical_block_size", "/../queue/logical_block_size"}) {
    if (auto line = procfs::read_first_line(dev + rel)) {
      try {
        const unsigned long v = std::stoul(*line);
        if (v >= 512) return static_cast<std::uint32_t>(v);
      } catch (const std::exception&) {
      }
    }
  }
  return 512;
}

std::optional<std::uint64_t> free_bytes(const std::string& dir) {
  struct statvfs sv{};
  if (statvfs(dir.c_str(), &sv) != 0) return std::nullopt;
  return static_cast<std::uint64_t>(sv.f_bavail) * sv.f_frsize;
}

std::uint64_t mem_available_bytes() {
  const auto info = procfs::read_meminfo();
  auto it = info.find("MemAvailable");
  return it == info.end() ? 0 : it->second;
}

std::string check_free_space(const std::string& dir, std::uint64_t needed) {
  struct statvfs sv{};
  // A file system that reports no size at all (ramfs: 0 blocks, 0 free) has no limit to check
  // against; a write that does not fit still fails and is reported then.
  if (statvfs(dir.c_str(), &sv) == 0 && sv.f_blocks == 0) return {};
  const auto have = free_bytes(dir);
  if (!have) return fmt::format("{}: cannot read free space ({})", dir, std::strerror(errno));
  if (*have >= needed) return {};
  return fmt::format("{}: not enough free space: needs {}, only {} free", dir, format_bytes(static_cast<double>(needed)),
                     format_bytes(static_cast<double>(*have)));
}

std::optional<bool> direct_io_supported(const std::string& dir, std::string* untested_why) {
  std::string probe = (fs::path(dir) / ".nodeaudit-odirect-XXXXXX").string();
  const int fd = mkstemp(probe.data());
  if (fd < 0) {
    // No file to try an O_DIRECT open on: nothing is known about O_DIRECT here.
    if (untested_why) *untested_why = fmt::format("cannot create a test file in {}: {}", dir, std::strerror(errno));
    return std::nullopt;
  }
  close(fd);
  const int direct_fd = open(probe.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  unlink(probe.c_str());
  if (direct_fd < 0) return false;
  close(direct_fd);
  return true;
}

const char* cache_label(bool direct, std::uint64_t data_bytes) {
  return !direct && data_bytes < mem_available_bytes() ? "page" : "none";
}

double process_cpu_s() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto secs = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6; };
  return secs(ru.ru_utime) + secs(ru.ru_stime);
}

std::uint64_t round_up(std::uint64_t value, std::uint64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

nlohmann::json latency_summary_json(const LatencyHistogram& h) {
  return {{"count", h.count()},
          {"p50_us", h.percentile_ns(0.50) / 1e3},
          {"p90_us", h.percentile_ns(0.90) / 1e3},
          {"p99_us", h.percentile_ns(0.99) / 1e3},
          {"p99_9_us", h.percentile_ns(0.999) / 1e3},
          {"max_us", static_cast<double>(h.max_ns()) / 1e3}};
}

}  // namespace nodeaudit::io
