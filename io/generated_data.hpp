// The dataset generator: creates the files a probe reads under a directory on the storage under
// test, with a manifest written last (so a manifest means "complete"). The files are made in a
// scratch directory marked with this process as owner (owned_dir.hpp): the GeneratedData handle
// removes it when it goes out of scope (normal end, error, Ctrl-C), and when the process dies
// before, the parent or a later run does. With --keep-data the finished set moves to a stable
// name, and a later run reuses it only when it is nodeaudit's own (kept_data.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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
  // Keeps the directory past this handle (--keep-data): no longer scratch.
  void keep();
  const std::string& token() const { return token_; }
  void set_token(std::string token) { token_ = std::move(token); }

 private:
  std::string dir_;
  std::vector<std::string> files_;
  bool remove_at_end_;
  bool reused_ = false;
  std::string token_;  // the kept set's manifest token; empty for other data
};

struct GenerateResult {
  std::unique_ptr<GeneratedData> data;
  std::string error;      // set on failure; nothing is left behind
  bool interrupted = false;
  bool out_of_space = false;  // the failure was the place being too small (ENOSPC, EDQUOT, EFBIG)
  std::vector<std::string> passed_over;  // stable names held by something not nodeaudit's (--keep-data)
};

// Creates (or, with keep_data, reuses) `spec` under `parent`. Refuses when free space is short.
// `should_stop` is polled between files and chunks; a stop removes what was written.
GenerateResult generate_dataset(const std::string& parent, const DatasetSpec& spec, bool keep_data,
                                const std::function<bool()>& should_stop);

// The result's `generated` block: where the set is, whether it was reused, its kept token, and
// the stable names passed over because they held something that is not nodeaudit's.
nlohmann::json describe_generated(const GenerateResult& g);

// Removes a directory this process created, and everything in it.
void remove_tree_quietly(const std::string& dir);

}  // namespace nodeaudit::io
