// The options that say what workload, and which GPUs, a node is judged for: declared once here with
// one help text each, and added to every command that judges (run, score, report), so the three
// say the same thing the same way. What they do is the session's (session/workload.hpp).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "harness/session/workload.hpp"

namespace nodeaudit::cli {

CLI::Option* add_profile_option(CLI::App& command, std::string& profile);
CLI::Option* add_target_gpus_option(CLI::App& command, std::string& target_gpus);
CLI::Option* add_expect_option(CLI::App& command, std::string& expect);
// `run`'s options beyond the common ones: --price-per-hour, --target-gpus, --expect, --python,
// --prometheus.
void add_run_extras(CLI::App& run, session::RunExtras& extras);

}  // namespace nodeaudit::cli
