// Small text helpers every test may use: how often a string occurs in a program's output, and where a
// program is on PATH (a test that needs one skips, naming it, when it is absent).
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <string>

namespace nodeaudit::test {

// Non-overlapping occurrences of `needle` in `text` (`needle` not empty).
inline std::size_t occurrences(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

// The executable `program` in PATH's directories (/usr/bin when PATH is unset); "" when none.
inline std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && ::access((dir + "/" + program).c_str(), X_OK) == 0) return dir + "/" + program;
  return "";
}

}  // namespace nodeaudit::test
