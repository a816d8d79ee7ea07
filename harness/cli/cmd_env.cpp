// `nodeaudit env`: the environment fingerprint that goes into every result.
#include <iostream>
#include <memory>

#include "harness/cli/commands.hpp"
#include "harness/cli/common_options.hpp"
#include "harness/core/errors.hpp"
#include "harness/node/env.hpp"
#include "harness/node/nvml.hpp"

namespace nodeaudit::cli {

void add_env_command(CLI::App& root, Action& action) {
  CLI::App* env = root.add_subcommand("env", "Print the node fingerprint: CPU, NUMA, memory, storage, GPUs, software");
  struct Options {
    std::string data_dir;
    std::string format = "table";
  };
  auto o = std::make_shared<Options>();
  env->add_option("--data-dir", o->data_dir, "Also describe the file system and device of this directory");
  env->add_option("--format", o->format, "table or json")->capture_default_str();
  env->callback([&action, o] {
    action = [o] {
      if (o->format != "table" && o->format != "json") throw UsageError("--format " + o->format, "expected table or json");
      session::CommonOptions common;
      common.data_dir = o->data_dir;
      Nvml nvml;
      const RunSettings settings = session::make_settings(common, nvml.device_count(), nvml.why_unavailable());
      const nlohmann::json fingerprint = collect_env(settings.data_dir, nvml);
      std::cout << (o->format == "json" ? fingerprint.dump(2) + "\n" : render_env(fingerprint));
      return exit_ok;
    };
  });
}

}  // namespace nodeaudit::cli
