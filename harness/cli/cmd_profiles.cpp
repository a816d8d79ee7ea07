// `nodeaudit profiles list` and `nodeaudit profiles show NAME|FILE`: the shipped workload profiles
// and what the scorer derives from one (FLOPs per sample, model state bytes, thresholds).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "../errors.hpp"
#include "../score/render.hpp"
#include "../score/score.hpp"
#include "commands.hpp"

namespace nodeaudit::cli {

namespace {

int list_profiles() {
  const auto names = score::shipped_profile_names();
  if (names.empty()) {
    std::cout << "no profiles in " << score::profiles_dir() << "\n";
    return exit_ok;
  }
  std::cout << fmt::format("{:<24} {:<27} {}\n", "NAME", "CATEGORY", "DESCRIPTION");
  for (const auto& name : names) {
    const score::Profile profile = score::load_profile(name);
    std::cout << fmt::format("{:<24} {:<27} {}\n", name, score::to_string(profile.category), profile.description);
  }
  return exit_ok;
}

}  // namespace

void add_profiles_command(CLI::App& root, Action& action) {
  CLI::App* cmd = root.add_subcommand("profiles", "List and show workload profiles");
  cmd->require_subcommand(1);
  CLI::App* list = cmd->add_subcommand("list", "List the shipped profiles");
  list->callback([&action] { action = [] { return list_profiles(); }; });

  struct ShowOptions {
    std::string name;
    std::string format = "table";
  };
  auto o = std::make_shared<ShowOptions>();
  CLI::App* show = cmd->add_subcommand("show", "Show one profile with its derived figures (checks a .toml file too)");
  show->add_option("name", o->name, "Profile NAME or FILE.toml")->required();
  show->add_option("--format", o->format, "table or json")->capture_default_str();
  show->callback([&action, o] {
    action = [o] {
      if (o->format != "table" && o->format != "json")
        throw UsageError("--format " + o->format, "expected table or json");
      const score::Profile profile = score::load_profile(o->name);
      std::cout << (o->format == "json" ? score::profile_to_json(profile).dump(2) + "\n"
                                        : score::render_profile(profile));
      return exit_ok;
    };
  });
}

}  // namespace nodeaudit::cli
