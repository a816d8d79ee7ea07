// The `nodeaudit` entry point: parse, run the chosen command, and turn user errors into one line
// `nodeaudit: <what>: <why>` with exit code 2.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "harness/cli/commands.hpp"
#include "harness/cli/unexpected_args.hpp"
#include "harness/core/errors.hpp"
#include "harness/core/registry.hpp"
#include "harness/core/version.hpp"
#include "harness/learn/job_guard.hpp"
#include "harness/node/env.hpp"
#include "harness/node/slurm_step.hpp"

namespace {

// CLI11 would call an unknown probe id "not expected"; say what it is and what exists instead.
void check_probe_id(int argc, char** argv) {
  if (argc < 3 || std::strcmp(argv[1], "probe") != 0 || argv[2][0] == '-') return;
  if (nodeaudit::probe_registry().find(argv[2]) != nullptr) return;
  std::string ids;
  for (const auto* s : nodeaudit::probe_registry().all()) ids += (ids.empty() ? "" : ", ") + s->id;
  throw nodeaudit::UsageError(std::string("probe '") + argv[2] + "'", "unknown probe id; known: " + ids);
}

// Under an MPI launcher (or as one of several srun tasks) every rank meets the same bad input; rank
// (task) 0 says it once, naming its host
// (the launcher's terminal may be on another machine). The launcher tears the job down when the
// first rank exits non-zero, so the others wait a moment first: a silent rank leaving first could
// kill rank 0 before it printed (seen under load).
int usage_error(const std::string& line) {
  const auto task = nodeaudit::launched_task(std::getenv);
  if (!task) std::cerr << "nodeaudit: " << line << "\n";
  else if (task->index == 0) std::cerr << "nodeaudit: " << line << " (" << task->kind << " 0 on " << nodeaudit::host_name() << ")\n";
  else std::this_thread::sleep_for(std::chrono::seconds(3));
  return nodeaudit::cli::exit_usage;
}

// A first word that is not a command, named with the commands there are (CLI11 would only say "A
// subcommand is required").
std::optional<std::string> unknown_command(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return std::nullopt;
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
  if (std::find(names.begin(), names.end(), argv[1]) != names.end()) return std::nullopt;
  return fmt::format("'{}' is not a command; the commands are {} (see nodeaudit --help)", argv[1], fmt::join(names, ", "));
}

}  // namespace

int main(int argc, char** argv) {
  using namespace nodeaudit;
  // learn's guardian (harness/learn/job_guard.hpp): started by learn itself, never by a user.
  if (argc > 1 && std::strcmp(argv[1], "__learn-guardian") == 0) return learn::run_guardian(argc, argv);
  CLI::App app{"nodeaudit: audit a GPU training server and say whether it is balanced for a workload"};
  app.set_version_flag("--version", version_string() + " (" + git_commit() + ")");
  app.require_subcommand(1);
  cli::Action action;
  cli::add_run_command(app, action);
  cli::add_probe_command(app, action);
  cli::add_list_command(app, action);
  cli::add_env_command(app, action);
  cli::add_score_command(app, action);
  cli::add_profiles_command(app, action);
  cli::add_compare_command(app, action);
  cli::add_report_command(app, action);
  cli::add_watch_command(app, action);
  cli::add_learn_command(app, action);
  cli::add_predict_command(app, action);
  cli::add_match_command(app, action);
  if (const auto unknown = unknown_command(app, argc, argv)) return usage_error(*unknown);
  try {
    check_probe_id(argc, argv);
    app.parse(argc, argv);
    return action ? action() : cli::exit_ok;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ExtrasError&) {
    return usage_error(cli::explain_unexpected_argument(app, argc, argv));
  } catch (const CLI::ParseError& e) {
    return usage_error(std::string(e.what()) + " (see nodeaudit --help)");
  } catch (const UsageError& e) {
    return usage_error(e.what());
  } catch (const nlohmann::json::exception& e) {
    // A field of a file the user gave (a result, a profile) with a type or value the reader did not
    // expect, found past the schema check: bad input, said in one line rather than an abort.
    return usage_error(fmt::format("a file given holds a field nodeaudit cannot use ({})", e.what()));
  }
}
