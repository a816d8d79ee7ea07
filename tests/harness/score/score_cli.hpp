// The score tests' CLI: `nodeaudit` with the shipped profiles' folder, stdout and stderr as one
// stream in `out` (tests/support/cli_expect.hpp runs it).
#pragma once

#include <string>

#include "tests/support/cli_expect.hpp"

namespace nodeaudit::score_test {

using CliRun = proc::ProcessResult;

inline CliRun run_cli(const std::string& args) {
  return proc::run_nodeaudit_merged(args, {.environment = {{"NODEAUDIT_PROFILE_DIR", NODEAUDIT_PROFILES}}});
}

}  // namespace nodeaudit::score_test
