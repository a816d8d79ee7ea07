// A test may skip only for want of something the environment lacks (a tool not installed, a kernel
// feature refused): never on the product's own word. Where CI knows this machine has the thing, it
// sets NODEAUDIT_EXPECT_<THING>=1 (.ci/run), and then the same lack is a failure, so a test cannot
// turn into a skip unnoticed.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace nodeaudit::test {

inline bool expected_here(const char* switch_name) {
  const char* value = std::getenv(switch_name);
  return value && std::string(value) == "1";
}

}  // namespace nodeaudit::test

// Skips with `reason`, or fails when `switch_name` (NODEAUDIT_EXPECT_...) is 1.
#define SKIP_UNLESS_EXPECTED(switch_name, reason)                                                   \
  do {                                                                                              \
    const std::string expect_reason_ = (reason);                                                    \
    if (::nodeaudit::test::expected_here(switch_name))                                              \
      FAIL() << switch_name << "=1 says this machine has it, yet: " << expect_reason_;              \
    GTEST_SKIP() << expect_reason_;                                                                 \
  } while (0)
