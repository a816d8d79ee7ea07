// Files for the CLI tests: a fixture's path and text, and a temporary directory removed at the end.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_process.hpp"

namespace nodeaudit::test_files {

inline std::string fixture(const std::string& name) {
  return std::string(NODEAUDIT_FIXTURES) + "/" + name;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct TempDir {
  std::string path = proc::make_temp_dir("inputs");
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path + "/" + name) << text;
    return path + "/" + name;
  }
};

}  // namespace nodeaudit::test_files
