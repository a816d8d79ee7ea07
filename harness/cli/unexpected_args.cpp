#include "harness/cli/unexpected_args.hpp"

#include <optional>
#include <vector>

#include <fmt/format.h>

#include "harness/core/registry.hpp"

namespace nodeaudit::cli {
namespace {

struct Unexpected {
  std::string token;               // as given: "--rank-timeout", "--rank-timeout=10s" or "10s"
  std::string option;              // "--rank-timeout"; empty for a lone value
  std::optional<std::string> value;
};

const CLI::App* subcommand_named(const CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (sub->get_name() == name) return sub;
  return nullptr;
}

// The innermost subcommand the command line names ("probe storage.read" -> storage.read's app),
// and in `next` the index of the first argument after its name.
const CLI::App* chosen_subcommand(const CLI::App& app, int argc, char** argv, int& next) {
  const CLI::App* chosen = nullptr;
  for (next = 1; next < argc; ++next) {
    const CLI::App* sub = subcommand_named(chosen ? *chosen : app, argv[next]);
    if (sub == nullptr) break;
    chosen = sub;
  }
  return chosen;
}

// The first argument `sub` does not take, walking the command line as the parser does: a known
// option that takes a value consumes the next argument unless it came as --name=value.
std::optional<Unexpected> first_unexpected(const CLI::App& sub, int first, int argc, char** argv) {
  // Positional arguments the subcommand declares (`probe ID`) take the first bare words.
  std::size_t positionals = sub.get_options([](const CLI::Option* o) { return o->get_positional(); }).size();
  for (int i = first; i < argc; ++i) {
    const std::string token = argv[i];
    if (token.size() < 2 || token[0] != '-') {
      if (positionals > 0) {
        --positionals;
        continue;
      }
      return Unexpected{token, "", std::nullopt};
    }
    const std::size_t equals = token.find('=');
    const std::string name = token.substr(0, equals);
    if (const CLI::Option* known = sub.get_option_no_throw(name)) {
      if (equals == std::string::npos && known->get_expected_min() > 0) ++i;
      continue;
    }
    Unexpected u{token, name, std::nullopt};
    if (equals != std::string::npos) u.value = token.substr(equals + 1);
    else if (i + 1 < argc && argv[i + 1][0] != '-') u.value = argv[i + 1];
    return u;
  }
  return std::nullopt;
}

// Probes (test-only ones aside) that declare a parameter called `name` ("rank-timeout").
std::vector<std::string> probes_with_param(const std::string& name) {
  std::vector<std::string> ids;
  for (const ProbeSpec* spec : probe_registry().all()) {
    if (spec->id.rfind("test.", 0) == 0) continue;
    for (const ParamSpec& p : spec->params)
      if (p.name == name) ids.push_back(spec->id);
  }
  return ids;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

std::string explain_unexpected_argument(const CLI::App& app, int argc, char** argv) {
  int next = 1;
  const CLI::App* sub = chosen_subcommand(app, argc, argv, next);
  if (sub == nullptr) return "unexpected arguments (see nodeaudit --help)";
  // "run", or "probe storage.read" for a probe's own options.
  std::string command = sub->get_name();
  for (const CLI::App* parent = sub->get_parent(); parent && parent->get_parent(); parent = parent->get_parent())
    command = parent->get_name() + " " + command;
  const std::optional<Unexpected> u = first_unexpected(*sub, next, argc, argv);
  if (!u) return fmt::format("{}: unexpected arguments (see nodeaudit {} --help)", command, command);
  if (u->option.empty())
    return fmt::format("{} {}: unexpected argument; {} takes options only (see nodeaudit {} --help)", command, u->token,
                       command, command);
  const std::vector<std::string> owners = probes_with_param(u->option.substr(2));
  if (command == "run" && !owners.empty()) {
    const std::string value = u->value.value_or("VALUE");
    return fmt::format(
        "run {}: not a run option but a parameter of probe {}; run takes only run-wide options (see nodeaudit run "
        "--help), so measure with it alone: nodeaudit probe {} {} {}",
        u->option, joined(owners), owners.front(), u->option, value);
  }
  return fmt::format("{} {}: unknown option (see nodeaudit {} --help)", command, u->option, command);
}

}  // namespace nodeaudit::cli
