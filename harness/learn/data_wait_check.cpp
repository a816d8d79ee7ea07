#include "harness/learn/data_wait_check.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core/units.hpp"
#include "harness/score/model.hpp"

namespace nodeaudit::learn {

DataWaitCheck check_data_wait(const score::JobMeasured& measured, const score::Profile& profile, const nlohmann::json& job_node,
                              const nlohmann::json& result, const std::string& source) {
  DataWaitCheck check;
  check.measured_share = measured.step_s > 0 ? measured.data_wait_s / measured.step_s : 0;
  check.measured_step_s = measured.step_s;
  check.source = source;
  score::JobDemand demand;
  demand.profile = &profile;
  demand.measured = &measured;
  demand.job_node = &job_node;
  const score::NodeModel node = score::build_model(demand, result);
  if (node.step.not_judged) {
    check.basis = "not judged: " + *node.step.not_judged;
    return check;
  }
  if (!node.step.unmeasured.empty()) {
    check.basis = fmt::format("not judged: {}", fmt::join(node.step.unmeasured, "; "));
    return check;
  }
  check.predicted_share = node.step.data_wait_share;
  check.predicted_step_s = node.step.step_s;
  check.basis = node.step.loader_resource.empty()
                    ? fmt::format("no loader stage needed; compute {}", format_duration(node.step.gpu_busy_s))
                    : fmt::format("{} {} per step against compute {}", node.step.loader_resource,
                                  format_duration(node.step.loader_s), format_duration(node.step.gpu_busy_s));
  return check;
}

std::string data_wait_line(const DataWaitCheck& check) {
  const std::string measured = fmt::format("measured {:.1f}% (this job)", 100 * check.measured_share);
  if (!check.predicted_share) return measured + " / " + check.basis;
  return fmt::format("{} / predicted {:.1f}% ({}; step {} predicted, {} measured)", measured, 100 * *check.predicted_share,
                     check.basis, format_duration(*check.predicted_step_s), format_duration(check.measured_step_s));
}

nlohmann::json to_json(const DataWaitCheck& check) {
  return {{"measured_share", check.measured_share},
          {"predicted_share", check.predicted_share ? nlohmann::json(*check.predicted_share) : nlohmann::json(nullptr)},
          {"measured_step_s", check.measured_step_s},
          {"predicted_step_s", check.predicted_step_s ? nlohmann::json(*check.predicted_step_s) : nlohmann::json(nullptr)},
          {"basis", check.basis},
          {"node_result", check.source}};
}

}  // namespace nodeaudit::learn
