#include "harness/score/cost.hpp"

namespace nodeaudit::score {

RunCost run_cost(const CostOptions& options, double predicted_hours, double run_units, const std::string& unit) {
  RunCost cost;
  cost.predicted_hours = predicted_hours;
  cost.compute_cost = options.price_per_hour.value_or(0) * predicted_hours;
  cost.extras = options.storage_cost + options.transfer_cost + options.ops_cost;
  cost.total = cost.compute_cost + cost.extras;
  cost.per_million = run_units > 0 ? cost.total / (run_units / 1e6) : 0;
  cost.unit = unit;
  return cost;
}

int cheapest(const std::vector<RunCost>& runs) {
  int best = -1;
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (best < 0 || runs[i].total < runs[static_cast<std::size_t>(best)].total) best = static_cast<int>(i);
  return best;
}

nlohmann::json to_json(const RunCost& cost, const CostOptions& options) {
  return {{"price_per_hour", options.price_per_hour.value_or(0)},
          {"predicted_hours", cost.predicted_hours},
          {"compute_cost", cost.compute_cost},
          {"storage_cost", options.storage_cost},
          {"transfer_cost", options.transfer_cost},
          {"ops_cost", options.ops_cost},
          {"run_cost", cost.total},
          {"per_million", cost.per_million},
          {"per_million_unit", cost.unit}};
}

}  // namespace nodeaudit::score
