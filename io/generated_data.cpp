#include "io/generated_data.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "harness/core/owned_dir.hpp"
#include "io/kept_data.hpp"
#include "io/pattern.hpp"
#include "io/storage_target.hpp"

namespace nodeaudit::io {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t chunk_bytes = 1 << 20;

std::vector<std::string> file_paths(const std::string& dir, const DatasetSpec& spec) {
  std::vector<std::string> paths;
  paths.reserve(spec.file_count);
  for (std::uint64_t i = 0; i < spec.file_count; ++i) paths.push_back((fs::path(dir) / dataset_file_name(i)).string());
  return paths;
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

void GeneratedData::keep() {
  remove_at_end_ = false;
  disown_dir(dir_);  // no longer scratch: a later run must not take it for abandoned
}

nlohmann::json describe_generated(const GenerateResult& g) {
  nlohmann::json j = {{"dir", g.data->dir()}, {"reused", g.data->reused()}};
  if (!g.data->token().empty()) j["token"] = g.data->token();
  if (!g.passed_over.empty()) j["passed_over"] = g.passed_over;
  return j;
}

void remove_tree_quietly(const std::string& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
}

namespace {

// Where a kept set of `spec` goes: the first stable name that is free or holds nodeaudit's own set.
// A set of ours for this spec is reused (`reuse` set); one for another spec is replaced; anything
// else of that name is the user's and is passed over.
struct KeptChoice {
  std::string dir;    // empty: no name is free
  bool reuse = false;
  std::string token;  // of the reused set
  std::vector<std::string> passed_over;
};
KeptChoice choose_kept_name(const std::string& parent, const DatasetSpec& spec) {
  KeptChoice choice;
  for (const std::string& candidate : kept_set_candidates(parent, spec.name)) {
    const KeptInspection found = inspect_kept_set(candidate, spec);
    if (found.state == KeptState::ours_matching) return {candidate, true, found.token, choice.passed_over};
    if (found.state == KeptState::absent || (found.state == KeptState::ours_other && remove_kept_set(candidate))) {
      choice.dir = candidate;
      return choice;
    }
    choice.passed_over.push_back(candidate);
  }
  return choice;
}

// Writes the set's files into `data`'s directory; fills `out` on a failure or a stop.
void write_files(const DatasetSpec& spec, const GeneratedData& data, const std::function<bool()>& should_stop, GenerateResult& out) {
  std::byte* chunk = static_cast<std::byte*>(std::aligned_alloc(4096, chunk_bytes));
  bool stopped = false;
  for (std::uint64_t i = 0; i < spec.file_count && out.error.empty() && !stopped; ++i) {
    if (should_stop && should_stop()) stopped = true;
    else out.error = write_one_file(data.files()[i], spec.file_bytes, file_seed(spec, i), chunk, should_stop, stopped, out.out_of_space);
  }
  std::free(chunk);
  if (out.error.empty() && !stopped) out.error = flush_and_drop(data.dir(), data.files(), out.out_of_space);
  out.interrupted = stopped && out.error.empty();
  if (!out.error.empty()) out.error = "cannot generate the data set: " + out.error;
}

// Moves a finished set from its scratch directory to its stable name, never over anything that
// appeared there meanwhile. Returns the handle to use from now on.
std::unique_ptr<GeneratedData> publish_kept(std::unique_ptr<GeneratedData> scratch, const DatasetSpec& spec, const std::string& stable) {
  if (renameat2(AT_FDCWD, scratch->dir().c_str(), AT_FDCWD, stable.c_str(), RENAME_NOREPLACE) != 0) return scratch;
  auto kept = std::make_unique<GeneratedData>(stable, file_paths(stable, spec), false);
  kept->keep();
  scratch->keep();  // its directory is gone (renamed): nothing to remove
  return kept;
}

}  // namespace

GenerateResult generate_dataset(const std::string& parent, const DatasetSpec& spec, bool keep_data,
                                const std::function<bool()>& should_stop) {
  GenerateResult out;
  KeptChoice kept;
  if (keep_data) {
    kept = choose_kept_name(parent, spec);
    out.passed_over = kept.passed_over;
    if (kept.reuse) {
      out.data = std::make_unique<GeneratedData>(kept.dir, file_paths(kept.dir, spec), false);
      out.data->set_reused(true);
      out.data->set_token(kept.token);
      return out;
    }
  }
  const std::uint64_t needed = spec.file_count * round_up(spec.file_bytes, 4096) + (1u << 20);
  if (auto why = check_free_space(parent, needed); !why.empty()) {
    out.error = "cannot generate the data set: " + why;
    out.out_of_space = true;
    return out;
  }
  // Made in a scratch directory of this process (removed with it if it dies), and only moved to
  // the stable name once complete: a kept set is never half written.
  std::string error;
  const std::string dir = make_owned_dir(parent, "nodeaudit-" + spec.name, error);
  if (dir.empty()) {
    out.error = "cannot generate the data set: " + error;
    return out;
  }
  auto data = std::make_unique<GeneratedData>(dir, file_paths(dir, spec), true);  // removes it on every early return
  write_files(spec, *data, should_stop, out);
  if (!out.error.empty() || out.interrupted) return out;
  const std::string token = new_dataset_token();
  std::ofstream(fs::path(dir) / manifest_name) << manifest_of(spec, token).dump(2) << "\n";
  data->set_token(token);
  if (keep_data && !kept.dir.empty()) data = publish_kept(std::move(data), spec, kept.dir);
  data->set_token(token);
  out.data = std::move(data);
  return out;
}

}  // namespace nodeaudit::io
