// The run-wide options `run` and `probe` share, declared once for the CLI parser. What they mean
// and how they are checked lives with the session engine (session/run_options.hpp); the names are
// brought in here for the other commands (learn, watch, env) that use the same plumbing.
#pragma once

#include <CLI/CLI.hpp>

#include "harness/session/run_options.hpp"

namespace nodeaudit::cli {

using session::claim_out_file;
using session::CommonOptions;
using session::hoist_multinode;
using session::install_interrupt_handler;
using session::make_settings;
using session::OutPath;
using session::own_command_line;
using session::parse_whole_number;
using session::remove_abandoned_scratch;
using session::resolve_out_path;
using session::rounds_for;
using session::self_exe_path;
using session::stderr_is_tty;
using session::stdout_is_tty;
using session::where_written;

void add_common_options(CLI::App& app, CommonOptions& options);

}  // namespace nodeaudit::cli
