// The launching side of a self-started MPI job, without MPI: rank 0's report stream read from a
// growing log, the launcher stopped when the stream goes quiet, and the outcome that keeps the
// figures and names the dead rank. Real processes (sh) stand in for the launcher.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "comm/job_watch.hpp"
#include "comm/mpi_launch.hpp"
#include "comm/rank_stream.hpp"

using namespace nodeaudit;
using namespace nodeaudit::comm;

namespace {

nlohmann::json entry_with(const std::string& status, const std::string& reason, int sizes) {
  nlohmann::json metrics = nlohmann::json::array();
  for (int i = 0; i < sizes; ++i)
    metrics.push_back({{"name", "pingpong_bw"}, {"unit", "GB/s"}, {"better", "higher"},
                       {"labels", {{"size", std::to_string(8 << i)}}}, {"samples", {1.0, 1.1}}});
  return {{"status", status},
          {"reason", reason},
          {"metrics", metrics},
          {"findings", nlohmann::json::array()},
          {"info", {{"sizes_checked", sizes}, {"rank_hosts", {{{"rank", 0}, {"host", "h1"}}, {{"rank", 1}, {"host", "h2"}}}}}}};
}

std::string temp_log(const char* name) { return (std::filesystem::temp_directory_path() / name).string(); }

}  // namespace

TEST(RankStream, KeepsTheNewestReportAndSkipsTornOrForeignLines) {
  RankStreamReader reader;
  const std::string first = report_line(entry_with("failed", "cut short", 1), false);
  const std::string second = report_line(entry_with("failed", "cut short", 2), false);
  EXPECT_TRUE(reader.feed("[1,0]<stdout>:" + first + "Open MPI says hello\n" + second.substr(0, 20)));
  EXPECT_EQ((*reader.last_entry())["info"]["sizes_checked"], 1);
  EXPECT_TRUE(reader.feed(second.substr(20)));  // the rest of the line arrives later
  EXPECT_EQ((*reader.last_entry())["info"]["sizes_checked"], 2);
  EXPECT_FALSE(reader.final_seen());
  EXPECT_FALSE(reader.feed("nodeaudit-rank-report {\"final\": tru\n"));  // torn: not a report
  EXPECT_EQ((*reader.last_entry())["info"]["sizes_checked"], 2);
  EXPECT_NE(reader.other_output().find("Open MPI says hello"), std::string::npos);
  EXPECT_TRUE(reader.feed(std::string(progress_line_text) + " ping-pong at 4 MiB between rank 0 (h1) and rank 1 (h2)\r\n"));
  EXPECT_EQ(reader.last_phase(), "ping-pong at 4 MiB between rank 0 (h1) and rank 1 (h2)");
  EXPECT_TRUE(reader.feed(report_line(entry_with("ok", "", 3), true)));
  EXPECT_TRUE(reader.final_seen());
}

TEST(RankCheckpoint, LastWordsResendTheLastEntryWithTheReasonOnce) {
  std::vector<nlohmann::json> kept;
  RankCheckpoint checkpoint;
  EXPECT_FALSE(checkpoint.active());
  checkpoint.add_keeper([&](const nlohmann::json& e) { kept.push_back(e); });
  checkpoint.save(entry_with("failed", "the job ended after 2 sizes", 2));
  checkpoint.last_words(Status::timeout, "rank 0 (h1) made no progress for 5 s in ping-pong at 4 MiB");
  checkpoint.last_words(Status::failed, "said twice");
  checkpoint.save(entry_with("failed", "after the last words", 3));  // ignored: the rank is ending
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[1]["status"], "timeout");
  EXPECT_EQ(kept[1]["reason"], "rank 0 (h1) made no progress for 5 s in ping-pong at 4 MiB");
  EXPECT_EQ(kept[1]["metrics"].size(), 2u);
}

TEST(DeadRank, FromOpenMpisSignalAndExitReports) {
  const auto by_signal = dead_rank_in(
      "-----\nmpirun noticed that process rank 1 with PID 0 on node 10.7.0.2 exited on signal 9 (Killed).\n-----");
  ASSERT_TRUE(by_signal);
  EXPECT_EQ(by_signal->rank, 1);
  EXPECT_EQ(describe(*by_signal), "rank 1 on 10.7.0.2 was killed by signal 9 (Killed)");
  const auto by_exit = dead_rank_in("The first process to do so was:\n\n  Process name:    [[59302,1],3]\n  Exit code:    124\n");
  ASSERT_TRUE(by_exit);
  EXPECT_EQ(describe(*by_exit), "rank 3 exited with code 124");
  EXPECT_FALSE(dead_rank_in("all good"));
}

TEST(Hostfile, RefusedBeforeAnyRankStarts) {
  const std::string path = temp_log("nodeaudit-hostfile-test");
  EXPECT_NE(hostfile_problem("/nonexistent/hosts").value_or("").find("--hostfile /nonexistent/hosts: cannot be read"), std::string::npos);
  std::ofstream(path) << "# comment only\n\n";
  EXPECT_NE(hostfile_problem(path).value_or("").find("names no host"), std::string::npos);
  std::ofstream(path) << "127.0.0.1 slots=2\nlocalhost\nno-such-host.invalid slots=1\n";
  const std::string problem = hostfile_problem(path).value_or("");
  EXPECT_NE(problem.find("host 'no-such-host.invalid' (line 3) does not resolve"), std::string::npos) << problem;
  std::ofstream(path) << "127.0.0.1 slots=2   # this machine\nlocalhost\n";
  EXPECT_FALSE(hostfile_problem(path).has_value());
  std::filesystem::remove(path);
}

TEST(JobWatch, StopsALauncherWhoseRankZeroFellSilent) {
  const std::string log = temp_log("nodeaudit-jobwatch-silent.log");
  JobWatch watch(log, 1, 1);
  const std::string script = "printf '" + std::string(progress_line_text) + "\\n'; sleep 60";
  const auto start = std::chrono::steady_clock::now();
  const LaunchEnd end = run_launcher({"sh", "-c", script}, log, 30, {}, [&] { return watch.poll(); });
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_FALSE(end.timed_out);
  EXPECT_LT(took, 15);
  EXPECT_NE(end.stopped_because.find("no word from rank 0 for 2 s"), std::string::npos) << end.stopped_because;
  const LaunchVerdict verdict = judge_launch(end, watch.stream(), 30);
  EXPECT_EQ(verdict.outcome.status, Status::failed);
  EXPECT_FALSE(verdict.report.has_value());
}

TEST(JobWatch, KeepsTheFinalReportOfALauncherThatHangsAfterIt) {
  const std::string log = temp_log("nodeaudit-jobwatch-final.log");
  JobWatch watch(log, 5, 1);
  std::ofstream(log + ".line") << report_line(entry_with("ok", "", 3), true);
  const LaunchEnd end = run_launcher({"sh", "-c", "cat " + log + ".line; sleep 60"}, log, 30, {}, [&] { return watch.poll(); });
  EXPECT_NE(end.stopped_because.find("rank 0 finished, but the launcher was still running"), std::string::npos);
  const LaunchVerdict verdict = judge_launch(end, watch.stream(), 30);
  EXPECT_EQ(verdict.outcome.status, Status::ok);
  ASSERT_TRUE(verdict.report.has_value());
  EXPECT_EQ(verdict.report->metrics.size(), 3u);
  ASSERT_EQ(verdict.report->findings.size(), 1u);
  EXPECT_EQ(verdict.report->findings[0].code, "mpi.launcher_hung");
  std::filesystem::remove(log + ".line");
}

TEST(JobWatch, ACutShortJobKeepsItsFiguresAndNamesTheDeadRanksHost) {
  RankStreamReader stream;
  stream.feed(report_line(entry_with("failed", "the job ended after 2 of the sizes", 2), false));
  stream.feed(std::string(progress_line_text) + " all-reduce at 32 B over 2 ranks on h1, h2\n");
  stream.feed("mpirun noticed that process rank 1 with PID 0 on node 10.7.0.2 exited on signal 9 (Killed).\n");
  LaunchEnd end;
  end.started = true;
  end.exit_code = 137;
  const LaunchVerdict verdict = judge_launch(end, stream, 30);
  EXPECT_EQ(verdict.outcome.status, Status::failed);
  EXPECT_EQ(verdict.outcome.reason,
            "rank 1 on h2 was killed by signal 9 (Killed) (node 10.7.0.2 to the launcher); the job ended after 2 of the "
            "sizes; rank 0 last reported progress in all-reduce at 32 B over 2 ranks on h1, h2; kept the figures of the 2 "
            "sizes completed before");
  ASSERT_TRUE(verdict.report.has_value());
  EXPECT_EQ(verdict.report->metrics.size(), 2u);
}
