// Each `nodeaudit` subcommand lives in its own file and adds itself to the root app with one of
// these functions. A subcommand's parse callback stores what to do in `action`; main runs it after
// parsing and uses its return value as the exit code (0 done, 1 FAIL / failed probe or regression,
// 2 bad usage or input, 130 interrupted). Bad input is thrown as UsageError and printed by main.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

#include "harness/session/exit_codes.hpp"

namespace nodeaudit::cli {

using Action = std::function<int()>;

void add_run_command(CLI::App& root, Action& action);
void add_probe_command(CLI::App& root, Action& action);
void add_list_command(CLI::App& root, Action& action);
void add_env_command(CLI::App& root, Action& action);
void add_score_command(CLI::App& root, Action& action);     // harness/cli/cmd_score.cpp
void add_profiles_command(CLI::App& root, Action& action);  // harness/cli/cmd_profiles.cpp
void add_compare_command(CLI::App& root, Action& action);   // harness/cli/cmd_compare.cpp
void add_report_command(CLI::App& root, Action& action);    // harness/cli/cmd_report.cpp
void add_watch_command(CLI::App& root, Action& action);     // harness/cli/cmd_watch.cpp
void add_learn_command(CLI::App& root, Action& action);     // harness/cli/cmd_learn.cpp
void add_predict_command(CLI::App& root, Action& action);   // harness/cli/cmd_predict.cpp
void add_match_command(CLI::App& root, Action& action);     // harness/cli/cmd_predict.cpp

// Exit codes, in one place (the session engine's).
using session::exit_fail;
using session::exit_interrupted;
using session::exit_ok;
using session::exit_usage;

}  // namespace nodeaudit::cli
