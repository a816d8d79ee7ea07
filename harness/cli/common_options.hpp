// The run-wide options `run` and `probe` share (--level, --gpus, --data-dir, --repetitions,
// --rounds, --keep-data, --format, --out), declared once for the parser. What they mean and how they
// are checked is the session engine's (session/run_options.hpp).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "harness/session/run_options.hpp"

namespace nodeaudit::cli {

void add_common_options(CLI::App& app, session::CommonOptions& options);

// `text` as a whole number from lo to hi; otherwise a UsageError naming `option` and the range.
int whole_number_in(const std::string& option, const std::string& text, int lo, int hi);

}  // namespace nodeaudit::cli
