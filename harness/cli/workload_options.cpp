#include "harness/cli/workload_options.hpp"

namespace nodeaudit::cli {

CLI::Option* add_profile_option(CLI::App& command, std::string& profile) {
  return command.add_option("--profile", profile,
                            "Workload profile NAME (see `nodeaudit profiles list`), FILE.toml, or a learn result JOB.json (the job's own measurements) to judge the node for");
}

CLI::Option* add_target_gpus_option(CLI::App& command, std::string& target_gpus) {
  return command.add_option(
      "--target-gpus", target_gpus,
      "Judge for these GPUs instead of the node's own: MODELxCOUNT (h100x8, h200x8, a100-80gbx4, l40sx4) or "
      "FILE.toml (needs --profile); GPU-side figures come from the GPU table, each labelled published measurement "
      "(another node) or datasheet peak");
}

CLI::Option* add_expect_option(CLI::App& command, std::string& expect) {
  return command.add_option("--expect", expect,
                            "TOML file with an [expect] section: limits and expected values for grading GPU figures, "
                            "over the profile's own and the built-in table's (needs --profile)");
}

void add_run_extras(CLI::App& run, session::RunExtras& extras) {
  run.add_option("--price-per-hour", extras.price_per_hour, "Node price per hour, for the cost of one training run");
  add_target_gpus_option(run, extras.target_gpus);
  add_expect_option(run, extras.expect);
  run.add_option("--python", extras.python,
                 "Python interpreter (with torch) for every probe that runs Python: host.dataloader, pipeline.step "
                 "--loader pytorch; default python3 on PATH");
  run.add_option("--prometheus", extras.prometheus,
                 "Also write every metric as a node_exporter textfile (replaces only a file nodeaudit wrote)");
}

}  // namespace nodeaudit::cli
