// Runs the real nodeaudit binary as a child process and captures what it printed and its exit.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace nodeaudit::proc {

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal
  std::string out, err;
};

// Runs argv; when interrupt_after_s is set, sends SIGINT to the child after that many seconds.
ProcessResult run_process(const std::vector<std::string>& argv, std::optional<double> interrupt_after_s = std::nullopt);

// A fresh empty directory under the temp dir, removed by the caller.
std::string make_temp_dir(const std::string& tag);
std::vector<std::string> files_in(const std::string& dir);

}  // namespace nodeaudit::proc
