// The fleet report in Markdown and HTML: the verdict and the failing nodes with why, the outlier
// GPUs, configuration drift, mixed results, then per probe (folded in HTML) every figure's fleet
// median, MAD, limit and the nodes past it, and last the inputs skipped with their reasons.
#pragma once

#include <string>

#include "harness/report/fleet_judge.hpp"
#include "harness/report/fleet_model.hpp"

namespace nodeaudit::report {

std::string render_fleet_markdown(const FleetInput& fleet, const FleetVerdict& verdict);
std::string render_fleet_html(const FleetInput& fleet, const FleetVerdict& verdict);

// Shared by both printers.
std::string fleet_rules_text(const FleetOptions& options);
std::string fleet_headline(const FleetInput& fleet, const FleetVerdict& verdict);  // "FAIL: 2 of 20 nodes fail"
// "node-03, node-09 and 4 more": at most `shown` names.
std::string node_names(const FleetInput& fleet, const std::vector<std::size_t>& nodes, std::size_t shown);
// How many node names a fleet table cell lists before it gives only their count.
inline constexpr std::size_t fleet_names_shown = 10;
// The figure groups per probe in first-seen order: [probe] -> figure indices.
std::vector<std::pair<std::string, std::vector<std::uint32_t>>> figures_per_probe(const FleetInput& fleet);

}  // namespace nodeaudit::report
