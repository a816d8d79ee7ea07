// The Python with torch the CLI tests run a real DataLoader in: the venv under the build folder
// (`make torch-venv`) or NODEAUDIT_TORCH_PYTHON. Without it a test skips, except where
// NODEAUDIT_EXPECT_TORCH=1 (CI), where that is a failure.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace nodeaudit::io::test {

inline std::string torch_python() {
  const char* given = std::getenv("NODEAUDIT_TORCH_PYTHON");
  return given && *given ? given : NODEAUDIT_TORCH_PYTHON;
}

}  // namespace nodeaudit::io::test

#define TORCH_OR_SKIP()                                                                                                  \
  if (access(::nodeaudit::io::test::torch_python().c_str(), X_OK) != 0) {                                                \
    const char* expect = std::getenv("NODEAUDIT_EXPECT_TORCH");                                                          \
    if (expect && std::string(expect) == "1")                                                                            \
      FAIL() << "no torch Python at " << ::nodeaudit::io::test::torch_python() << " (make torch-venv)";                  \
    GTEST_SKIP() << "no torch Python at " << ::nodeaudit::io::test::torch_python()                                       \
                 << ": run `make torch-venv` or set NODEAUDIT_TORCH_PYTHON";                                             \
  }
