// The full figures below the scorecard, grouped per probe: every metric any node has (curves,
// percentiles, per-GPU series), each node's median in its unit, and for a node without the figure
// its probe's status (skipped, crashed, ... with the reason) so a gap is never silent.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/report/report_model.hpp"

namespace nodeaudit::report {

struct DetailRow {
  std::string metric;  // "tflops [dtype=bf16, gpu=0]"
  std::string unit;
  bool higher_is_better = true;
  std::vector<std::optional<double>> medians;  // node order; absent when that node lacks the figure
  int best = -1;                               // strictly best node among two or more figures, else -1
};

struct ProbeGroup {
  std::string probe;
  std::string meaning;                   // probe_meaning() (probe_catalogue.hpp)
  std::vector<std::string> node_status;  // "ok", "skipped: no CUDA device", "not in this result"
  std::vector<DetailRow> rows;
  bool every_node_ok() const;
};

// Groups in the order probes first appear across the nodes; rows in the order metrics first appear.
std::vector<ProbeGroup> group_details(const Report& report);

}  // namespace nodeaudit::report
