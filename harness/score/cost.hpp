// The cost of one effective training run: hourly price x predicted hours + per-run extras. Comparing
// nodes by this figure, not by their hourly price, is the point: a dearer node that finishes sooner
// can be the cheaper one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nodeaudit::score {

struct CostOptions {
  std::optional<double> price_per_hour;
  double storage_cost = 0;
  double transfer_cost = 0;
  double ops_cost = 0;
};

struct RunCost {
  double predicted_hours = 0;
  double compute_cost = 0;  // price_per_hour x predicted_hours
  double extras = 0;        // storage + transfer + operations, per run
  double total = 0;
  double per_million = 0;  // total / (run units / 1e6)
  std::string unit;        // "samples" or "tokens"
};

// run_units: the target run length in `unit` (samples or tokens); price must be set.
RunCost run_cost(const CostOptions& options, double predicted_hours, double run_units, const std::string& unit);
// Index of the cheapest run by total cost (the first on a tie); -1 for an empty list.
int cheapest(const std::vector<RunCost>& runs);
nlohmann::json to_json(const RunCost& cost, const CostOptions& options);

}  // namespace nodeaudit::score
