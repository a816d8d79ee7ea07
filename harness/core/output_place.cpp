#include "harness/core/output_place.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "harness/core/errors.hpp"

namespace nodeaudit {

namespace fs = std::filesystem;

void check_output_place(const std::string& option, const std::string& path, Existing existing) {
  const std::string what = option + " " + path;
  if (path.empty()) throw UsageError(option, "needs a file name");
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      std::error_code ec;
      const std::string target = fs::read_symlink(path, ec).string();
      throw UsageError(what, "is a symbolic link (to " + target +
                                 "); nodeaudit neither writes through a link nor replaces one: give the real path");
    }
    if (S_ISDIR(st.st_mode)) throw UsageError(what, "is a directory; give a new file name");
    if (existing == Existing::refuse)
      throw UsageError(what, "already exists; nodeaudit never overwrites a file (choose another name)");
  }
  const fs::path parent = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : fs::path(".");
  struct stat parent_st {};
  if (stat(parent.c_str(), &parent_st) != 0)
    throw UsageError(what, "directory " + parent.string() + " does not exist; give a file in an existing directory");
  if (!S_ISDIR(parent_st.st_mode))
    throw UsageError(what, parent.string() + " is a file, not a directory; give a file in an existing directory");
  if (access(parent.c_str(), W_OK) != 0)
    throw UsageError(what, "directory " + parent.string() + " is not writable; give a file in a writable directory");
}

}  // namespace nodeaudit
