// Where shipped profiles live and how a name or a path becomes a Profile.
#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "harness/core/errors.hpp"
#include "harness/score/score.hpp"

#ifndef NODEAUDIT_SOURCE_DIR
#define NODEAUDIT_SOURCE_DIR "."
#endif

namespace nodeaudit::score {

namespace fs = std::filesystem;

std::string profiles_dir() {
  if (const char* dir = std::getenv("NODEAUDIT_PROFILE_DIR"); dir && *dir) return dir;
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  if (!error) {
    for (const fs::path& candidate :
         {exe.parent_path() / ".." / "profiles", exe.parent_path() / ".." / ".." / "profiles"})
      if (fs::is_directory(candidate, error)) return fs::weakly_canonical(candidate, error).string();
  }
  return (fs::path(NODEAUDIT_SOURCE_DIR) / "profiles").string();
}

std::vector<std::string> shipped_profile_names() {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(profiles_dir(), error))
    if (entry.is_regular_file() && entry.path().extension() == ".toml") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

Profile load_profile(const std::string& name_or_path) {
  const bool is_path = name_or_path == "-" || name_or_path.find('/') != std::string::npos || fs::path(name_or_path).extension() == ".toml";
  if (is_path) return load_profile_file(name_or_path);
  const fs::path path = fs::path(profiles_dir()) / (name_or_path + ".toml");
  if (!fs::is_regular_file(path)) {
    std::string names;
    for (const auto& name : shipped_profile_names()) names += (names.empty() ? "" : ", ") + name;
    throw UsageError("--profile " + name_or_path, "no such shipped profile in " + profiles_dir() +
                                                      "; available: " + (names.empty() ? "(none)" : names) +
                                                      ", or a path to a .toml file");
  }
  return load_profile_file(path.string());
}

}  // namespace nodeaudit::score
