// The one fixture loader: recorded inputs under tests/fixtures by their path there ("results/
// balanced.json"), as a path, text or JSON; and a temporary directory removed at the end. A fixture
// that cannot be read is a test failure naming it, never an empty input the test then passes on.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/cli_process.hpp"
#include "tests/support/temp_dir.hpp"

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

inline std::string fixture_text(const std::string& name) {
  const std::string path = fixture(name);
  EXPECT_TRUE(std::ifstream(path).good()) << "cannot read fixture " << path;
  return read_text(path);
}

inline nlohmann::json fixture_json(const std::string& name) {
  return nlohmann::json::parse(fixture_text(name));
}

}  // namespace nodeaudit::test_files
