// What a probe's figures mean, declared by the probe beside its parameters: each figure's name, unit,
// which way is better, the labels it carries and one line of meaning, and the probe's own one line.
// Plain data with no dependency beyond metric.hpp, so the scorer and the reporters can read every
// probe's declarations (the probe catalogue) without linking any probe body.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/core/metric.hpp"

namespace nodeaudit {

struct FigureSpec {
  std::string name;  // the metric name the probe records: "tflops", "h2d_bandwidth"
  std::string unit;  // as recorded: one of metric.hpp's units
  // Empty where the direction depends on a label (pipeline.step's stage_busy_pct: compute's share
  // is better high, the others low); the meaning then says which.
  std::optional<Better> better;
  std::vector<std::string> labels;  // the label keys the figure may carry
  std::string meaning;              // one line
};

// Kinds of probe the harness treats differently without naming them.
enum class ProbeRole {
  measurement,          // records figures
  configuration_audit,  // records findings about settings (and no figures); fleet lists their drift
};

struct ProbeFigures {
  std::string probe_id;
  std::string meaning;  // one line: what is measured, per what, and which way is good
  ProbeRole role = ProbeRole::measurement;
  std::vector<FigureSpec> figures;
  // What results/SCHEMA.md says of the probe beyond each figure's line: the values its labels take,
  // its `info` fields and its findings. Empty where there is nothing more; the reports do not show it.
  std::string details;
};

}  // namespace nodeaudit
