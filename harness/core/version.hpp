// The tool version and the git commit it was built from (stamped by CMake).
#pragma once

#include <string>

namespace nodeaudit {
std::string version_string();
std::string git_commit();
}  // namespace nodeaudit
