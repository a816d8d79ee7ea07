// Verdicts of the balance model: one Rule per seed rule of shared/ARCHITECTURE.md (thresholds from
// the profile), the overall verdict, the bottleneck sentence and the upgrade advice.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/score/model.hpp"
#include "harness/score/profile.hpp"

namespace nodeaudit::score {

enum class Verdict { pass, warn, fail, not_judged };
std::string to_string(Verdict verdict);  // PASS, WARN, FAIL, NOT_JUDGED

struct Rule {
  std::string name;  // utilization, memory_fit, communication, data_wait, host_ram, cpu_cores, uniformity, step_time
  Verdict verdict = Verdict::not_judged;
  std::optional<double> figure;
  std::optional<double> threshold;  // the PASS limit
  std::optional<double> fail_threshold;
  std::string unit;    // fraction, ratio, cores/GPU, s
  std::string text;    // "<rule>: <figure> <op> <threshold>" or "<rule>: not judged (<why>)"
  std::string reason;  // not judged: why
  // The inputs of a judged rule that are --target-gpus table figures, not measurements.
  std::vector<std::string> datasheet_inputs;
};

std::vector<Rule> judge_rules(const Profile& profile, const NodeModel& node);
nlohmann::json to_json(const Rule& rule);
nlohmann::json overall_verdict(const std::vector<Rule>& rules);
nlohmann::json bottleneck(const Profile& profile, const NodeModel& node);
nlohmann::json upgrade_advice(const Profile& profile, const NodeModel& node);

std::string percent(double fraction);  // 0.625 -> "62.5%"

}  // namespace nodeaudit::score
