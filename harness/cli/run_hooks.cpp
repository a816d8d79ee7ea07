#include "run_hooks.hpp"

#include "../errors.hpp"

namespace nodeaudit::cli {

void add_run_extras(CLI::App& run, RunExtras& extras) {
  run.add_option("--price-per-hour", extras.price_per_hour, "Node price per hour, for the cost of one training run");
  run.add_option("--prometheus", extras.prometheus, "Also write a node_exporter textfile with every metric");
}

std::string prepare_profile(const std::string& name_or_path, RunExtras&) {
  if (name_or_path.empty()) return "";
  throw UsageError("--profile " + name_or_path, "profiles are not available in this build yet");
}

std::map<std::string, std::string> probe_params_for(const ProbeSpec&, const RunExtras&, const RunSettings&) { return {}; }

int assess_run(nlohmann::json&, const RunExtras&, std::FILE*, bool) { return 0; }

void write_run_side_outputs(const nlohmann::json&, const RunExtras& extras) {
  if (!extras.prometheus.empty()) throw UsageError("--prometheus " + extras.prometheus, "not available in this build yet");
}

}  // namespace nodeaudit::cli
