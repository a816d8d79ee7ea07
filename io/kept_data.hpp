// Data sets kept between runs (--keep-data) under a stable name, <place>/nodeaudit-<set name>, and
// how nodeaudit tells its own from anything else there. A kept set is nodeaudit's only when its
// manifest is nodeaudit's (schema, a random token written when the set was made) and the directory
// holds exactly the files that manifest names, each a regular file: a folder of that name with a
// foreign or empty manifest, a file of the user's inside, or a symlink is the user's, and is never
// removed or reused; the set goes to the next free name instead.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nodeaudit::io {

struct DatasetSpec;

inline constexpr const char* manifest_name = "manifest.json";
inline constexpr const char* manifest_schema = "nodeaudit.dataset/2";

// The file names of a set, in order (f0000000.bin, ...).
std::string dataset_file_name(std::uint64_t index);

// The manifest written last into a complete set; `token` is random, made once per set.
nlohmann::json manifest_of(const DatasetSpec& spec, const std::string& token);
std::string new_dataset_token();

enum class KeptState {
  absent,         // nothing of that name: the set may be made there
  ours_matching,  // nodeaudit's, complete, for this spec: reuse it
  ours_other,     // nodeaudit's but for another spec or incomplete: may be replaced
  foreign,        // anything else: left alone
};

struct KeptInspection {
  KeptState state = KeptState::absent;
  std::string token;  // of a set that is ours
};
KeptInspection inspect_kept_set(const std::string& dir, const DatasetSpec& spec);

// Removes a set that inspect_kept_set found ours: exactly the files its manifest names, the
// manifest, then the directory (which fails, leaving it, if anything else appeared meanwhile).
bool remove_kept_set(const std::string& dir);

// The stable names a kept set may take under `parent`, first choice first.
std::vector<std::string> kept_set_candidates(const std::string& parent, const std::string& set_name);

}  // namespace nodeaudit::io
