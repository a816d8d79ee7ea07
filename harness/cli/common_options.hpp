// The run-wide options `run` and `probe` share (--level, --gpus, --data-dir, --repetitions,
// --rounds, --keep-data, --format, --out), declared once for the parser. What they mean and how they
// are checked is the session engine's (session/run_options.hpp).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "harness/session/run_options.hpp"

namespace nodeaudit::cli {

void add_common_options(CLI::App& app, session::CommonOptions& options);

using session::whole_number_in;

}  // namespace nodeaudit::cli
