#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "harness/core/errors.hpp"
#include "harness/core/result.hpp"

namespace nodeaudit {

namespace {

// Writes `content` to a temp file beside `path` and renames it into place; with `must_be_new` the
// rename refuses to replace anything. Returns false only when `must_be_new` and `path` exists.
bool write_and_rename(const std::string& path, const std::string& content, bool must_be_new) {
  const std::filesystem::path target(path);
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  std::string temp = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  const int fd = mkstemp(temp.data());
  if (fd < 0) throw UsageError(path, std::string("cannot create a file in ") + dir.string() + ": " + std::strerror(errno));
  auto fail = [&](const std::string& why) {
    const int saved = errno;
    close(fd);
    unlink(temp.c_str());
    throw UsageError(path, why + ": " + std::strerror(saved));
  };
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write failed");
    }
    written += static_cast<std::size_t>(n);
  }
  if (fchmod(fd, 0644) != 0 || fsync(fd) != 0) fail("cannot flush");
  close(fd);
  const int rc = must_be_new ? renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE)
                             : rename(temp.c_str(), path.c_str());
  if (rc == 0) return true;
  const int saved = errno;
  unlink(temp.c_str());
  if (saved == EEXIST) return false;
  throw UsageError(path, std::string("cannot rename into place: ") + std::strerror(saved));
}

}  // namespace

void write_file_atomic(const std::string& path, const std::string& content, bool must_be_new) {
  if (!write_and_rename(path, content, must_be_new))
    throw UsageError(path, "already exists; nodeaudit never overwrites a file (choose another --out)");
}

bool write_new_file_atomic(const std::string& path, const std::string& content) {
  return write_and_rename(path, content, true);
}

}  // namespace nodeaudit
