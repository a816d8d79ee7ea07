// How a probe's metric is named in the Prometheus textfile: Prometheus's base units (bytes,
// seconds, ratios 0..1) instead of the probe's GB/s, microseconds and percent, and a latency
// percentile as one `quantile` of a summary family rather than a metric of its own. The probe's
// own name and unit stay in the HELP text; results/PROMETHEUS.md lists every name.
#pragma once

#include <optional>
#include <string>

namespace nodeaudit::report {

struct PrometheusSeries {
  std::string family;                   // "nodeaudit_storage_read_latency_seconds"
  double scale = 1;                     // probe value x scale = exposed value (us -> s: 1e-6)
  std::string base_unit;                // "seconds", "bytes per second", "ratio (0..1)"; empty: none
  std::optional<std::string> quantile;  // "0.99" for latency_p99, "1" for latency_max: a summary family
};

// Known (metric, unit) pairs by name; any other metric by its unit (GB/s -> _bytes_per_second, ...),
// its unit's token dropped from the name. A unit nodeaudit does not know is exposed as the probe
// wrote it (scale 1, no suffix), and HELP says the unit.
PrometheusSeries prometheus_series(const std::string& probe, const std::string& metric, const std::string& unit);

}  // namespace nodeaudit::report
