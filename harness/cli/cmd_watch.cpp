// `nodeaudit watch`: the options of watching a running training job, declared for the parser; the
// watch itself is harness/watch's (watch/watch_session.hpp: it starts in watch_session).
#include <memory>

#include "harness/cli/commands.hpp"
#include "harness/session/run_options.hpp"
#include "harness/watch/watch_session.hpp"

namespace nodeaudit::cli {

void add_watch_command(CLI::App& root, Action& action) {
  CLI::App* cmd = root.add_subcommand("watch", "Sample a running training job's GPU and host telemetry and diagnose its idle time");
  auto o = std::make_shared<watch::WatchRequest>();
  cmd->add_option("--duration", o->duration, "How long to watch, e.g. 30m, 2h (Ctrl-C ends early)")->capture_default_str();
  auto* interval = cmd->add_option("--interval", o->interval, "Time between samples, at least 100ms")->capture_default_str();
  auto* pid = cmd->add_option("--pid", o->pid, "Also follow this process and its children (CPU, storage reads)");
  auto* all = cmd->add_flag("--all", o->all, "Watch the whole node without following a process (the default)");
  pid->excludes(all);
  cmd->add_option("--out", o->out, "Result file or directory (default results/)");
  cmd->callback([&action, o, interval] {
    o->argv = session::own_command_line();
    o->interval_given = interval->count() > 0;
    action = [o] { return watch::watch_session(*o); };
  });
}

}  // namespace nodeaudit::cli
