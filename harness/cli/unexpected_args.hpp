// What to say when a command line holds an argument the subcommand does not take. CLI11's own
// message lists the leftovers in reverse order ("10s --rank-timeout") and says nothing of where
// the option belongs; a probe parameter given to `run` is the common case, so it is named with
// the probe that owns it and the command that takes it.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace nodeaudit::cli {

// The "<what>: <why>" part of the one-line error for the first argument `app`'s chosen subcommand
// does not take, read from the command line in order.
std::string explain_unexpected_argument(const CLI::App& app, int argc, char** argv);

}  // namespace nodeaudit::cli
