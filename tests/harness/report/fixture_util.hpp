// Loading the recorded fixtures the report tests use, and golden-file comparison.
#pragma once

#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "harness/core/result.hpp"
#include "tests/support/fixtures.hpp"

namespace nodeaudit::test {

using test_files::read_text;
inline std::string compare_fixture(const std::string& name) { return test_files::fixture("compare/" + name); }
inline std::string results_fixture(const std::string& name) { return test_files::fixture("results/" + name); }
inline nlohmann::json load_compare(const std::string& name) { return load_result_file(compare_fixture(name)); }

// Compares with tests/fixtures/report/<name>; NODEAUDIT_UPDATE_GOLDEN=1 rewrites the file instead.
inline void expect_matches_golden(const std::string& actual, const std::string& name) {
  const std::string path = test_files::fixture("report/" + name);
  if (std::getenv("NODEAUDIT_UPDATE_GOLDEN")) {
    std::ofstream(path) << actual;
    return;
  }
  const std::string expected = read_text(path);
  ASSERT_FALSE(expected.empty()) << path << " missing; run with NODEAUDIT_UPDATE_GOLDEN=1 and review the diff";
  EXPECT_EQ(actual, expected) << "differs from " << path << " (NODEAUDIT_UPDATE_GOLDEN=1 rewrites it; review the diff)";
}

}  // namespace nodeaudit::test
