// The watch as a result document entry (results/SCHEMA.md, section "watch"): one probes[] entry with
// id `watch.telemetry` holding the metrics, the findings, the summary, the diagnosis with evidence
// and the whole series in `info`, and the usual telemetry summary. Also the live status line and
// the terminal rendering of the diagnosis.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/watch/classify.hpp"
#include "harness/watch/series.hpp"

namespace nodeaudit::watch {

inline constexpr const char* watch_probe_id = "watch.telemetry";

struct WatchRun {
  double requested_duration_s = 0;
  double interval_s = 1;
  std::optional<int> pid;
  std::string ended_by;  // "duration", "interrupted", "process exited"
  double wall_s = 0;
};

nlohmann::json watch_probe_entry(const WatchSeries& series, const Diagnosis& diagnosis, const WatchRun& run);

// One line, no newline: elapsed time, GPU utilization, memory, CPU, disk and network now.
std::string status_line(const WatchSeries& series, double requested_duration_s);

// The findings and the summary, for the terminal.
std::string render_diagnosis(const Diagnosis& diagnosis);

}  // namespace nodeaudit::watch
