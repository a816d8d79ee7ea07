// Options shared by `run` and `probe`, and the checks that turn them into RunSettings.
#pragma once

#include <atomic>
#include <string>

#include <CLI/CLI.hpp>

#include "../context.hpp"

namespace nodeaudit::cli {

struct CommonOptions {
  std::string level = "quick";
  std::string gpus;        // "0,1"; empty = all
  std::string data_dir;
  std::string profile;
  std::string repetitions; // empty = not given
  bool keep_data = false;
  std::string format = "table";
  std::string out;
};

void add_common_options(CLI::App& app, CommonOptions& options);

// Validates level, repetitions, GPUs against the node's GPU count (from NVML), data dir.
// Throws UsageError naming the bad value.
RunSettings make_settings(const CommonOptions& options, int gpus_on_node, const std::string& why_no_gpu);

// --out FILE|DIR -> the file to create. A directory (existing, or ending in '/') gets the default
// name; the parent directory must exist; an existing file is refused (never overwritten).
std::string resolve_out_path(const std::string& out, const std::string& default_dir, const std::string& host);

// Path of the running binary, for re-executing it as a probe child.
std::string self_exe_path();

// SIGINT/SIGTERM set this flag; the first signal asks for a clean stop.
const std::atomic<bool>& install_interrupt_handler();

bool stdout_is_tty();
bool stderr_is_tty();

// This process's command line (from /proc/self/cmdline), recorded in the result for reproduction.
std::vector<std::string> own_command_line();

}  // namespace nodeaudit::cli
