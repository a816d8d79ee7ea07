// How rank 0 of a self-launched job hands its figures back to the probe that started the job: as
// lines on its standard output, which the launcher forwards to the launching process from any
// host (no shared file system needed):
//   nodeaudit-rank-progress PHASE                a timed step of PHASE completed (at once when
//                                                the phase is new, else at most one a second)
//   nodeaudit-rank-report {"final":B,"entry":E}  the probe's entry as it stands (E: status, reason,
//                                                metrics, findings, info; rank_report.hpp's format)
// A report with final=false is a checkpoint: the figures of every completed step, with the status a
// reader takes if nothing more arrives. The launching side reads the log as it grows
// (RankStreamReader) and keeps the last report, so a rank or host lost mid-sweep costs only the
// steps not completed. Host-only: no MPI here.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/probe.hpp"

namespace nodeaudit::comm {

// Set to "stdout" by the self-launch: rank 0 streams its reports there.
inline constexpr const char* rank_report_env = "NODEAUDIT_COMM_REPORT";
inline constexpr const char* report_line_prefix = "nodeaudit-rank-report ";
inline constexpr const char* progress_line_text = "nodeaudit-rank-progress";

std::string report_line(const nlohmann::json& entry, bool final);

// Reads the launcher's log as it grows: complete lines only, the newest report kept.
class RankStreamReader {
 public:
  // Feeds the next bytes of the log. Returns true when they held a progress or report line.
  bool feed(const std::string& bytes);
  const std::optional<nlohmann::json>& last_entry() const { return last_entry_; }
  bool final_seen() const { return final_seen_; }
  // Lines that are not the stream's (Open MPI's own messages, the rank's table), for error texts.
  const std::string& other_output() const { return other_; }
  // The phase of rank 0's newest progress line ("ping-pong at 32 MiB between ..."), or empty.
  const std::string& last_phase() const { return last_phase_; }

 private:
  void take_line(const std::string& line, bool& saw);
  std::string pending_;
  std::optional<nlohmann::json> last_entry_;
  bool final_seen_ = false;
  std::string other_;
  std::string last_phase_;
};

// Rank 0's figures so far, kept where they survive the job ending early. After each completed step
// the probe's entry as it stands goes to every keeper, with the status a reader should take if
// nothing more comes ("the job ended after ..."). When the watchdog or the launcher's signal ends
// the rank, `last_words` sends that entry once more with the reason (rank, host, phase).
class RankCheckpoint {
 public:
  using Keeper = std::function<void(const nlohmann::json& entry)>;
  void add_keeper(Keeper keeper);
  bool active() const;
  void save(nlohmann::json entry);  // the probe's thread
  // Any thread, once: the last saved entry (or an empty one) with this status and reason.
  void last_words(Status status, const std::string& why);

 private:
  mutable std::mutex mutex_;
  std::vector<Keeper> keepers_;
  nlohmann::json entry_;
  bool said_ = false;
};

// One report line on stdout, written whole (a self-launched rank 0's report, final or a checkpoint).
void stream_report(const nlohmann::json& entry, bool final);
// The keeper a self-launched rank 0 uses: stream_report(entry, false).
RankCheckpoint::Keeper stdout_stream_keeper();
bool streaming_to_stdout();  // NODEAUDIT_COMM_REPORT=stdout
// A progress line on stdout (the launching side's no-progress clock and its record of the phase):
// at once for a new phase, else at most once a second.
void stream_progress(const std::string& phase);

}  // namespace nodeaudit::comm
