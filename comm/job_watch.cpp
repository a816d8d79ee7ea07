#include "comm/job_watch.hpp"

#include <fstream>
#include <iterator>
#include <vector>

#include <fmt/format.h>

namespace nodeaudit::comm {

JobWatch::JobWatch(std::string log_path, double rank_timeout_s, double grace_s)
    : log_path_(std::move(log_path)), rank_timeout_s_(rank_timeout_s), grace_s_(grace_s) {}

std::optional<std::string> JobWatch::poll() {
  std::ifstream in(log_path_, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset_));
  const std::string gained{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  offset_ += gained.size();
  const auto now = clock::now();
  if (stream_.feed(gained)) last_progress_ = now;
  if (stream_.final_seen() && !final_at_) final_at_ = now;
  const auto seconds_since = [&](clock::time_point t) { return std::chrono::duration<double>(now - t).count(); };
  if (final_at_ && seconds_since(*final_at_) > grace_s_)
    return fmt::format("rank 0 finished, but the launcher was still running {:.0f} s later (a host it started may be "
                       "unreachable); stopped it", grace_s_);
  if (!final_at_ && seconds_since(last_progress_) > rank_timeout_s_ + grace_s_)
    return fmt::format("no word from rank 0 for {:.0f} s (--rank-timeout {:.0f} s + {:.0f} s): a rank or its host stopped "
                       "answering and the launcher did not end the job; stopped it",
                       rank_timeout_s_ + grace_s_, rank_timeout_s_, grace_s_);
  return std::nullopt;
}

namespace {

// The launcher names a node as its hostfile does (often an address); rank 0's placement has the
// host's own name.
std::string describe_with_host_name(DeadRank dead, const std::optional<RankReport>& report) {
  if (!report || !report->info.contains("rank_hosts")) return describe(dead);
  for (const auto& placed : report->info["rank_hosts"])
    if (placed.value("rank", -1) == dead.rank) {
      const std::string name = placed.value("host", "");
      if (!dead.host.empty() && dead.host != name) dead.how += " (node " + dead.host + " to the launcher)";
      dead.host = name;
    }
  return describe(dead);
}

std::string kept_figures(const RankReport& report) {
  const auto sizes = report.info.find("sizes_checked");
  if (report.metrics.empty()) return "no figure was completed";
  if (sizes == report.info.end()) return fmt::format("kept {} figures completed before", report.metrics.size());
  return fmt::format("kept the figures of the {} sizes completed before", sizes->get<std::uint64_t>());
}

}  // namespace

LaunchVerdict judge_launch(const LaunchEnd& end, const RankStreamReader& stream, double timeout_s) {
  LaunchVerdict verdict;
  if (stream.last_entry()) verdict.report = report_from_json(stream.last_entry()->dump());
  const std::optional<DeadRank> dead = dead_rank_in(stream.other_output() + "\n" + end.log_tail);
  if (end.interrupted) {
    verdict.outcome = Outcome::interrupted();
    return verdict;
  }
  if (!verdict.report) {
    const std::string why = describe_failed_launch(end, timeout_s);
    verdict.outcome = Outcome::failed(dead ? describe(*dead) + "; " + why : why);
    return verdict;
  }
  RankReport& report = *verdict.report;
  if (stream.final_seen()) {
    verdict.outcome = report.outcome;
    if (!end.stopped_because.empty())
      report.findings.push_back({Severity::warn, "mpi.launcher_hung", end.stopped_because});
    else if (end.exit_code != 0)
      report.findings.push_back({Severity::warn, "mpi.launcher_failed_after_report",
                                 describe_failed_launch(end, timeout_s) + " (after rank 0's final report, which stands)"});
    return verdict;
  }
  // Cut short: rank 0's last words (or its checkpoint's "ended after ..."), what the launcher saw.
  std::vector<std::string> parts;
  if (dead) parts.push_back(describe_with_host_name(*dead, verdict.report));
  parts.push_back(report.outcome.reason);
  // Without rank 0's last words (killed before they were forwarded) its progress lines still say where it was.
  if (!stream.last_phase().empty() && report.outcome.reason.find(stream.last_phase()) == std::string::npos)
    parts.push_back("rank 0 last reported progress in " + stream.last_phase());
  if (!end.stopped_because.empty()) parts.push_back(end.stopped_because);
  else if (end.timed_out) parts.push_back(describe_failed_launch(end, timeout_s));
  parts.push_back(kept_figures(report));
  const Status status = dead ? Status::failed : report.outcome.status == Status::timeout ? Status::timeout : Status::failed;
  verdict.outcome = Outcome{status, fmt::format("{}", fmt::join(parts, "; "))};
  return verdict;
}

}  // namespace nodeaudit::comm
