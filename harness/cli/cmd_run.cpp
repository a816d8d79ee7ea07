// `nodeaudit run`: the options of a run, declared for the parser; the run itself is the session
// engine's (session/session.hpp: a run starts in run_session and ends in its finish).
#include <memory>

#include "harness/cli/commands.hpp"
#include "harness/cli/common_options.hpp"
#include "harness/cli/workload_options.hpp"
#include "harness/session/session.hpp"
#include "harness/session/workload.hpp"

namespace nodeaudit::cli {

void add_run_command(CLI::App& root, Action& action) {
  CLI::App* run =
      root.add_subcommand("run", "Run the audit: every built probe (or --only), isolated, into one result file");
  auto request = std::make_shared<session::RunRequest>();
  add_common_options(*run, request->common);
  add_profile_option(*run, request->common.profile);
  run->add_option("--only", request->only, "Comma-separated probe ids or globs to run, e.g. 'gpu.*,storage.read'");
  run->add_option("--skip", request->skip, "Comma-separated probe ids or globs to leave out");
  run->add_option("--telemetry-out", request->telemetry_out, "Also keep the telemetry series as CSV in this file");
  add_run_extras(*run, request->extras);
  run->callback([&action, request] {
    request->argv = session::own_command_line();
    action = [request] { return session::run_session(*request); };
  });
}

}  // namespace nodeaudit::cli
