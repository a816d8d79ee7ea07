// What a storage probe needs to know about the place it measures, and the checks that turn a bad
// place into a one-line reason naming the value: the path to use (--path, else --data-dir),
// whether it is a file, a directory or a block device, its logical block size (the O_DIRECT
// alignment), free space, and whether a buffered figure would be a page-cache figure.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "harness/core/context.hpp"
#include "io/latency_histogram.hpp"

namespace nodeaudit::io {

enum class TargetKind { file, directory, block_device };

struct StorageTarget {
  std::string path;
  TargetKind kind = TargetKind::directory;
  std::uint64_t size_bytes = 0;  // file or block device size
};

// --path, or the run's --data-dir when --path is empty. A directory must be writable (every probe
// creates its files in the directory it gets; a read-only file system is said as such). `write_probe`
// refuses block devices and files, and requires the directory inside --data-dir when both are given.
// Returns the reason on failure; `skip` is set when neither was given (nothing to measure).
struct TargetOrReason {
  std::optional<StorageTarget> target;
  std::string reason;
  bool skip = false;
};
TargetOrReason resolve_target(const std::string& path_param, const std::string& data_dir, bool write_probe);

// ProbeSpec::check_places for a probe that resolves its place as above; `has_path_param` false for
// a probe that only uses --data-dir.
std::function<std::string(const ParamValues&, const RunSettings&)> places_check(bool write_probe, bool has_path_param = true);

// Logical block size of the device holding `path` (sysfs queue/logical_block_size, or BLKSSZGET
// for a block device); 512 when it cannot be found.
std::uint32_t logical_block_size(const std::string& path);
std::optional<std::uint64_t> free_bytes(const std::string& dir);
std::uint64_t mem_available_bytes();
// Empty when `dir` has room for `needed` bytes; else "needs X at DIR, only Y free".
std::string check_free_space(const std::string& dir, std::uint64_t needed);
// Whether O_DIRECT opens work on `dir`'s file system, tested with a temporary file; std::nullopt
// when no temporary file could be made (then nothing was tested, and `untested_why` says why).
std::optional<bool> direct_io_supported(const std::string& dir, std::string* untested_why = nullptr);

// "none" for O_DIRECT or data larger than free RAM; "page" for a buffered read of data that fits.
const char* cache_label(bool direct, std::uint64_t data_bytes);

// User + system CPU seconds of this process (all threads, io_uring workers included).
double process_cpu_s();

std::uint64_t round_up(std::uint64_t value, std::uint64_t multiple);

// Percentiles of a pooled histogram, for info(): {"p50_us", "p90_us", "p99_us", "p99_9_us", "max_us", "count"}.
nlohmann::json latency_summary_json(const LatencyHistogram& h);

}  // namespace nodeaudit::io
