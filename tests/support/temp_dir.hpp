// A fresh directory for one test, removed with everything in it when the test ends. It is made under
// the system temp dir unless `parent` names a folder: the io and pipeline tests keep theirs in the
// build tree, on the disk, where O_DIRECT works (a tmpfs may refuse it).
#pragma once

#include <stdlib.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

namespace nodeaudit::test_files {

class TempDir {
 public:
  explicit TempDir(const std::string& parent = {}, const std::string& tag = "inputs") {
    const std::filesystem::path base = parent.empty() ? std::filesystem::temp_directory_path() : std::filesystem::path(parent);
    std::error_code ec;
    std::filesystem::create_directories(base, ec);
    std::string pattern = (base / ("nodeaudit-test-" + tag + "-XXXXXX")).string();
    if (mkdtemp(pattern.data())) path = pattern;
  }
  ~TempDir() {
    if (path.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Writes `text` to the file `name` in the directory; returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path + "/" + name) << text;
    return path + "/" + name;
  }
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(path), {}));
  }

  std::string path;  // empty when the directory could not be made
};

}  // namespace nodeaudit::test_files
