// The launching side of a self-launched MPI probe: watches the launcher's log while the job runs
// and turns how it ended into the probe's outcome, keeping every figure rank 0 reported.
//
// Bounds (each from the last progress line of rank 0, one per completed timed step):
//  - a stall ends within --rank-timeout + grace: the ranks' watchdogs end them at --rank-timeout
//    and the launcher then ends the job; when it does not (a lost host's daemon cannot be reached,
//    so Open MPI waits for it forever) the launcher's process group is killed at + grace;
//  - rank 0 lost with its host sends nothing more: the same bound;
//  - a launcher still running `grace` after rank 0's final report is killed (the report stands).
// Host-only: no MPI here.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "comm/mpi_launch.hpp"
#include "comm/rank_report.hpp"
#include "comm/rank_stream.hpp"
#include "harness/core/probe.hpp"

namespace nodeaudit::comm {

class JobWatch {
 public:
  JobWatch(std::string log_path, double rank_timeout_s, double grace_s);
  // Reads what the log gained; a reason to stop the launcher now, or nullopt.
  std::optional<std::string> poll();
  const RankStreamReader& stream() const { return stream_; }

 private:
  using clock = std::chrono::steady_clock;
  std::string log_path_;
  double rank_timeout_s_, grace_s_;
  std::uint64_t offset_ = 0;
  RankStreamReader stream_;
  clock::time_point last_progress_ = clock::now();
  std::optional<clock::time_point> final_at_;
};

// What the probe records for a self-launched job: rank 0's last report (figures kept whatever
// happened after it) and the outcome naming the dead rank, its host and the phase where known.
struct LaunchVerdict {
  std::optional<RankReport> report;
  Outcome outcome;
};
LaunchVerdict judge_launch(const LaunchEnd& end, const RankStreamReader& stream, double timeout_s);

}  // namespace nodeaudit::comm
