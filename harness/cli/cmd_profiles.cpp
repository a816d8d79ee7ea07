// `nodeaudit profiles list` and `nodeaudit profiles show NAME|FILE`: the shipped workload profiles
// and what the scorer derives from one (FLOPs per sample, model state bytes, thresholds).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "harness/cli/commands.hpp"
#include "harness/core/errors.hpp"
#include "harness/score/gpu_table_text.hpp"
#include "harness/score/render.hpp"
#include "harness/score/score.hpp"

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

  auto g = std::make_shared<ShowOptions>();
  CLI::App* gpus = cmd->add_subcommand(
      "gpus", "The GPU table --target-gpus and pipeline.step read: every model, or one model's figures with sources");
  gpus->add_option("model", g->name, "A model of the table (h100, a100-80gb, ...) or a target FILE.toml");
  gpus->add_option("--format", g->format, "table or json")->capture_default_str();
  gpus->callback([&action, g] {
    action = [g] {
      if (g->format != "table" && g->format != "json") throw UsageError("--format " + g->format, "expected table or json");
      if (g->name.empty()) {
        if (g->format == "table") {
          std::cout << score::render_gpu_table();
          return exit_ok;
        }
        nlohmann::json all = nlohmann::json::object();
        for (const score::GpuModel& m : score::gpu_table()) all[m.name] = score::gpu_model_figures(m);
        std::cout << all.dump(2) << "\n";
        return exit_ok;
      }
      const score::GpuModel* known = score::find_gpu_model(g->name);
      const bool file = g->name.size() > 5 && g->name.compare(g->name.size() - 5, 5, ".toml") == 0;
      if (!known && !file)
        throw UsageError("profiles gpus " + g->name, "unknown model; known: " + score::known_gpu_models() + "; or a FILE.toml");
      const score::GpuModel model = known ? *known : score::parse_target_gpus(g->name).model;
      std::cout << (g->format == "json" ? score::gpu_model_figures(model).dump(2) + "\n" : score::render_gpu_model(model));
      return exit_ok;
    };
  });
}

}  // namespace nodeaudit::cli
