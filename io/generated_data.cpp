#include "generated_data.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "pattern.hpp"
#include "storage_target.hpp"

namespace nodeaudit::io {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t chunk_bytes = 1 << 20;
constexpr const char* manifest_name = "manifest.json";

nlohmann::json manifest_of(const DatasetSpec& spec) {
  return {{"schema", "nodeaudit.dataset/1"}, {"name", spec.name}, {"file_count", spec.file_count},
          {"file_bytes", spec.file_bytes}, {"seed", spec.seed}};
}

std::string file_name(std::uint64_t index) { return fmt::format("f{:07}.bin", index); }

std::vector<std::string> file_paths(const std::string& dir, const DatasetSpec& spec) {
  std::vector<std::string> paths;
  paths.reserve(spec.file_count);
  for (std::uint64_t i = 0; i < spec.file_count; ++i) paths.push_back((fs::path(dir) / file_name(i)).string());
  return paths;
}

bool complete_and_matching(const std::string& dir, const DatasetSpec& spec) {
  std::ifstream in(fs::path(dir) / manifest_name);
  if (!in) return false;
  try {
    if (nlohmann::json::parse(in) != manifest_of(spec)) return false;
  } catch (const std::exception&) {
    return false;
  }
  std::error_code ec;
  for (const auto& p : file_paths(dir, spec))
    if (fs::file_size(p, ec) != spec.file_bytes || ec) return false;
  return true;
}

// A full file system, an exhausted quota or a file-size limit: the place is too small for the
// data set, which is bad input (the user chose the place), not a failed measurement.
bool is_out_of_space(int error_number) { return error_number == ENOSPC || error_number == EDQUOT || error_number == EFBIG; }

// Writes one file of the pattern; returns the error text or empty.
std::string write_one_file(const std::string& path, std::uint64_t bytes, std::uint64_t seed, std::byte* chunk,
                           const std::function<bool()>& should_stop, bool& stopped, bool& out_of_space) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    out_of_space = is_out_of_space(errno);
    return fmt::format("create {}: {}", path, std::strerror(errno));
  }
  std::string error;
  for (std::uint64_t done = 0; done < bytes && error.empty();) {
    if (should_stop && should_stop()) {
      stopped = true;
      break;
    }
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_bytes, bytes - done));
    fill_pattern(chunk, n, seed, done);
    const ssize_t w = pwrite(fd, chunk, n, static_cast<off_t>(done));
    if (w < 0) {
      out_of_space = is_out_of_space(errno);
      error = fmt::format("write {} at offset {}: {}", path, done, std::strerror(errno));
    } else {
      done += static_cast<std::uint64_t>(w);
    }
  }
  if (close(fd) != 0 && error.empty()) {
    out_of_space = is_out_of_space(errno);
    error = fmt::format("close {}: {}", path, std::strerror(errno));
  }
  return error;
}

// One syncfs for the whole set (one fsync per small file would dominate), then drop the pages so
// the first read is not served from the page cache.
std::string flush_and_drop(const std::string& dir, const std::vector<std::string>& files, bool& out_of_space) {
  const int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return fmt::format("open {}: {}", dir, std::strerror(errno));
  const int rc = syncfs(dir_fd);
  const int sync_errno = errno;
  close(dir_fd);
  if (rc != 0) {
    out_of_space = is_out_of_space(sync_errno);
    return fmt::format("syncfs {}: {}", dir, std::strerror(sync_errno));
  }
  for (const auto& f : files) {
    const int fd = open(f.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
  }
  return {};
}

}  // namespace

std::uint64_t file_seed(const DatasetSpec& spec, std::uint64_t index) { return spec.seed + (index << 40); }

GeneratedData::GeneratedData(std::string dir, std::vector<std::string> files, bool remove_at_end)
    : dir_(std::move(dir)), files_(std::move(files)), remove_at_end_(remove_at_end) {}

GeneratedData::~GeneratedData() {
  if (remove_at_end_) remove_tree_quietly(dir_);
}

void remove_tree_quietly(const std::string& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
}

GenerateResult generate_dataset(const std::string& parent, const DatasetSpec& spec, bool keep_data,
                                const std::function<bool()>& should_stop) {
  GenerateResult out;
  const std::string stable_dir = (fs::path(parent) / ("nodeaudit-" + spec.name)).string();
  if (keep_data && complete_and_matching(stable_dir, spec)) {
    out.data = std::make_unique<GeneratedData>(stable_dir, file_paths(stable_dir, spec), false);
    out.data->set_reused(true);
    return out;
  }
  const std::uint64_t needed = spec.file_count * round_up(spec.file_bytes, 4096) + (1u << 20);
  if (auto why = check_free_space(parent, needed); !why.empty()) {
    out.error = "cannot generate the data set: " + why;
    out.out_of_space = true;
    return out;
  }
  std::string dir = stable_dir;
  std::error_code ec;
  if (keep_data) {
    if (fs::exists(fs::path(stable_dir) / manifest_name, ec) || !fs::exists(stable_dir, ec)) remove_tree_quietly(stable_dir);
    else {  // a directory of that name that nodeaudit did not finish: never touch it
      out.error = fmt::format("{} exists without a nodeaudit manifest; remove it or choose another --data-dir", stable_dir);
      return out;
    }
    if (!fs::create_directory(dir, ec)) {
      out.error = fmt::format("create {}: {}", dir, ec.message());
      return out;
    }
  } else {
    dir = (fs::path(parent) / ("nodeaudit-" + spec.name + "-XXXXXX")).string();
    if (!mkdtemp(dir.data())) {
      out.error = fmt::format("create a directory in {}: {}", parent, std::strerror(errno));
      return out;
    }
  }
  // From here on the handle owns the directory: any early return removes it.
  auto data = std::make_unique<GeneratedData>(dir, file_paths(dir, spec), true);
  std::byte* chunk = static_cast<std::byte*>(std::aligned_alloc(4096, chunk_bytes));
  bool stopped = false;
  for (std::uint64_t i = 0; i < spec.file_count && out.error.empty() && !stopped; ++i) {
    if (should_stop && should_stop()) stopped = true;
    else out.error = write_one_file(data->files()[i], spec.file_bytes, file_seed(spec, i), chunk, should_stop, stopped, out.out_of_space);
  }
  std::free(chunk);
  if (out.error.empty() && !stopped) out.error = flush_and_drop(dir, data->files(), out.out_of_space);
  if (!out.error.empty() || stopped) {
    out.interrupted = stopped && out.error.empty();
    if (!out.error.empty()) out.error = "cannot generate the data set: " + out.error;
    return out;  // `data` removes the directory
  }
  std::ofstream(fs::path(dir) / manifest_name) << manifest_of(spec).dump(2) << "\n";
  if (keep_data) data->keep();
  out.data = std::move(data);
  return out;
}

}  // namespace nodeaudit::io
