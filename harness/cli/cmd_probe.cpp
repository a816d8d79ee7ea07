// `nodeaudit probe ID [--PARAM VALUE ..]`: runs one probe in this process. Each registered probe is
// a subcommand whose options come from its ParamSpecs, so `nodeaudit probe storage.read --help`
// lists exactly its parameters. `run` re-executes this command as the isolated child, and an MPI
// rank runs it too; what happens then is the session engine's (session/session.hpp).
#include <fmt/format.h>

#include <map>
#include <memory>

#include "harness/cli/commands.hpp"
#include "harness/cli/common_options.hpp"
#include "harness/core/registry.hpp"
#include "harness/session/session.hpp"

namespace nodeaudit::cli {
namespace {

struct ProbeOptions {
  session::ProbeRequest request;
  std::map<std::string, std::string> texts;  // parameter name -> text as typed
  std::map<std::string, CLI::Option*> options;
};

std::string param_help(const ParamSpec& p) {
  const auto& d = p.default_by_level;
  const std::string defaults =
      (d[0] == d[1] && d[1] == d[2]) ? d[1] : fmt::format("quick {}, standard {}, soak {}", d[0], d[1], d[2]);
  return fmt::format("{} ({}; default {})", p.help, describe_accepted(p), defaults.empty() ? "none" : defaults);
}

int execute(const ProbeSpec& spec, ProbeOptions& o) {
  for (const auto& [name, opt] : o.options)
    if (opt->count() > 0) o.request.given[name] = o.texts[name];
  return session::probe_session(spec, o.request);
}

}  // namespace

void add_probe_command(CLI::App& root, Action& action) {
  CLI::App* probe = root.add_subcommand("probe", "Run one probe; every probe parameter is an option (probe ID --help)");
  probe->require_subcommand(1);
  for (const ProbeSpec* spec : probe_registry().all()) {
    CLI::App* sub = probe->add_subcommand(spec->id, spec->description);
    auto o = std::make_shared<ProbeOptions>();
    add_common_options(*sub, o->request.common);
    sub->add_option("--child-out", o->request.child_out)->group("");
    sub->add_option("--settings", o->request.settings_json)->group("");
    sub->add_option("--deadline-s", o->request.deadline_s)->group("");
    for (const ParamSpec& p : spec->params)
      o->options[p.name] = sub->add_option("--" + p.name, o->texts[p.name], param_help(p));
    sub->callback([&action, spec, o] { action = [spec, o] { return execute(*spec, *o); }; });
  }
}

}  // namespace nodeaudit::cli
