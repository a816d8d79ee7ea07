// The dataset generator: creates the files a probe reads under a directory on the storage under
// test, with a manifest written last (so a manifest means "complete"). The GeneratedData handle
// removes exactly what it created when it goes out of scope (normal end, error, Ctrl-C), unless
// --keep-data; with --keep-data a complete dataset whose manifest matches is reused as is.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace nodeaudit::io {

struct DatasetSpec {
  std::string name;          // directory name stem: "read-256MiB", "dataset-110KiB-x2000"
  std::uint64_t file_count = 1;
  std::uint64_t file_bytes = 0;
  std::uint64_t seed = 1;    // pattern seed; file i uses seed + i * 2^40
};

std::uint64_t file_seed(const DatasetSpec& spec, std::uint64_t index);

class GeneratedData {
 public:
  GeneratedData(std::string dir, std::vector<std::string> files, bool remove_at_end);
  ~GeneratedData();
  GeneratedData(const GeneratedData&) = delete;
  GeneratedData& operator=(const GeneratedData&) = delete;

  const std::string& dir() const { return dir_; }
  const std::vector<std::string>& files() const { return files_; }
  bool reused() const { return reused_; }
  void set_reused(bool reused) { reused_ = reused; }
  void keep() { remove_at_end_ = false; }

 private:
  std::string dir_;
  std::vector<std::string> files_;
  bool remove_at_end_;
  bool reused_ = false;
};

struct GenerateResult {
  std::unique_ptr<GeneratedData> data;
  std::string error;      // set on failure; nothing is left behind
  bool interrupted = false;
  bool out_of_space = false;  // the failure was the place being too small (ENOSPC, EDQUOT, EFBIG)
};

// Creates (or, with keep_data, reuses) `spec` under `parent`. Refuses when free space is short.
// `should_stop` is polled between files and chunks; a stop removes what was written.
GenerateResult generate_dataset(const std::string& parent, const DatasetSpec& spec, bool keep_data,
                                const std::function<bool()>& should_stop);

// Removes a directory this process created, and everything in it.
void remove_tree_quietly(const std::string& dir);

}  // namespace nodeaudit::io
