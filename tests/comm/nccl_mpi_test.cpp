// The multi-node NCCL path and `run` under mpirun, with real MPI ranks on loopback: every rank
// decides the same thing, rank 0 alone writes one result naming every rank, a hung peer ends the
// job through the watchdog, and a launch without any MPI-capable probe is refused. In a build
// without NCCL (the sanitizer build) the same launch must be refused as bad input instead.
#include <gtest/gtest.h>

#include "tests/support/expect_gate.hpp"
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "comm/mpi_launch.hpp"
#include "tests/support/cli_expect.hpp"

using namespace nodeaudit::comm;
namespace fs = std::filesystem;

namespace {

std::string fmt_name(const char* name) { return std::string("nodeaudit-") + name + "-" + std::to_string(getpid()); }

bool have_mpirun() { return std::system("command -v mpirun >/dev/null 2>&1") == 0; }

// Whether this build has the NCCL probes (`nodeaudit list` says "built" or "not built (...)").
bool nccl_built() {
  const std::string text = nodeaudit::proc::run_nodeaudit({"list"}).out;
  const auto at = text.find("comm.allreduce");
  return at != std::string::npos && text.compare(text.find_first_not_of(' ', at + 14), 5, "built") == 0;
}

std::vector<std::string> mpirun_prefix() {
  std::vector<std::string> args = {"mpirun", "--oversubscribe"};
  if (geteuid() == 0) args.push_back("--allow-run-as-root");
  return args;
}

std::vector<std::string> mpirun_np2(std::vector<std::string> program) {
  std::vector<std::string> args = mpirun_prefix();
  args.insert(args.end(), {"-np", "2", NODEAUDIT_BINARY});
  args.insert(args.end(), program.begin(), program.end());
  return args;
}

// A fresh directory for one test's result files.
fs::path fresh_dir(const char* name) {
  const fs::path dir = fs::temp_directory_path() / fmt_name(name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path());
  return files;
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

}  // namespace

TEST(MultiNodeNccl, TwoRanksAgreeAndRankZeroWritesOneResult) {
  if (!have_mpirun()) SKIP_UNLESS_EXPECTED("NODEAUDIT_EXPECT_MPI", "mpirun not found on PATH (install openmpi-bin)");
  const fs::path dir = fresh_dir("nccl-mpi");
  const LaunchEnd end = run_launcher(
      mpirun_np2({"probe", "comm.allreduce", "--watchdog", "5s", "--out", (dir / "allreduce.json").string()}),
      (fs::temp_directory_path() / (fmt_name("nccl-mpi") + ".log")).string(), 120, {});
  ASSERT_FALSE(end.timed_out) << end.log_tail;
  if (!nccl_built()) {  // MPI launch of a build without NCCL: bad input, said once, no file
    EXPECT_EQ(end.exit_code, 2) << end.log_tail;
    const std::string line = "nodeaudit: comm.allreduce under an MPI launcher: not built (";
    const auto first = end.log_tail.find(line);
    EXPECT_NE(first, std::string::npos) << end.log_tail;
    EXPECT_EQ(end.log_tail.find(line, first + 1), std::string::npos) << end.log_tail;
    EXPECT_TRUE(files_in(dir).empty());
    return;
  }
  EXPECT_EQ(end.exit_code, 0) << end.log_tail;  // skipped and ok both exit 0
  const auto files = files_in(dir);
  ASSERT_EQ(files.size(), 1u) << "rank 0 alone writes";
  const auto doc = read_json(files[0]);
  const auto& probe = doc["probes"][0];
  EXPECT_EQ(doc["multinode"]["ranks"], 2);
  EXPECT_EQ(doc["multinode"]["hosts"].size(), 1u);
  ASSERT_EQ(doc["multinode"]["placement"].size(), 2u);
  EXPECT_EQ(doc["multinode"]["placement"][0]["local_rank"], 0);
  EXPECT_EQ(doc["multinode"]["placement"][1]["local_rank"], 1);
  if (probe["status"] == "ok") {  // a node with 2 GPUs: figures from both ranks
    EXPECT_FALSE(probe["metrics"].empty());
    return;
  }
  EXPECT_EQ(probe["status"], "skipped") << probe.dump(2);
  EXPECT_NE(probe["reason"].get<std::string>().find("no CUDA device on 2 of 2 ranks (rank 0 on "), std::string::npos)
      << probe["reason"];
  EXPECT_TRUE(probe["metrics"].empty());
  fs::remove_all(dir);
}

TEST(MultiNodeNccl, RunUnderMpirunRunsCommProbesInEveryRank) {
  if (!have_mpirun()) SKIP_UNLESS_EXPECTED("NODEAUDIT_EXPECT_MPI", "mpirun not found on PATH (install openmpi-bin)");
  const fs::path dir = fresh_dir("run-mpi");
  const LaunchEnd end =
      run_launcher(mpirun_np2({"run", "--only", "comm.host-fabric,comm.allreduce,comm.p2p", "--out", (dir / "run.json").string()}),
                   (fs::temp_directory_path() / (fmt_name("run-mpi") + ".log")).string(), 240, {});
  ASSERT_FALSE(end.timed_out) << end.log_tail;
  EXPECT_EQ(end.exit_code, 0) << end.log_tail;
  const auto files = files_in(dir);
  ASSERT_EQ(files.size(), 1u) << "rank 0 alone writes";
  const auto doc = read_json(files[0]);
  ASSERT_EQ(doc["probes"].size(), 3u);
  std::map<std::string, nlohmann::json> by_id;
  for (const auto& p : doc["probes"]) by_id[p["id"]] = p;
  EXPECT_EQ(by_id["comm.host-fabric"]["status"], "ok") << by_id["comm.host-fabric"].dump(2);
  EXPECT_EQ(by_id["comm.host-fabric"]["info"]["ranks"], 2);  // the job's ranks, not a self-started pair
  EXPECT_FALSE(by_id["comm.host-fabric"]["info"].contains("launch_command"));
  EXPECT_EQ(by_id["comm.p2p"]["status"], "skipped");
  EXPECT_NE(by_id["comm.p2p"]["reason"].get<std::string>().find("measures one node"), std::string::npos);
  if (nccl_built()) EXPECT_EQ(doc["multinode"]["ranks"], 2);
  else EXPECT_NE(by_id["comm.allreduce"]["reason"].get<std::string>().find("not built"), std::string::npos);
  fs::remove_all(dir);
}

TEST(MultiNodeNccl, HungPeerEndsTheJobThroughTheWatchdog) {
  if (!have_mpirun()) SKIP_UNLESS_EXPECTED("NODEAUDIT_EXPECT_MPI", "mpirun not found on PATH (install openmpi-bin)");
  if (!nccl_built()) GTEST_SKIP() << "this build has no NCCL probes: their MPI path does not exist here";
  // rank 0: nodeaudit's NCCL path; rank 1: a helper that never joins MPI_Init.
  std::vector<std::string> args = mpirun_prefix();
  args.insert(args.end(), {"-np", "1", NODEAUDIT_BINARY, "probe", "comm.allreduce", "--watchdog", "2s", ":", "-np", "1",
                           COMM_MPI_HELPER, "hang"});
  const LaunchEnd end = run_launcher(args, (fs::temp_directory_path() / (fmt_name("nccl-hang") + ".log")).string(), 60, {});
  EXPECT_FALSE(end.timed_out) << "the rank watchdog should end the job before the launcher's timeout";
  EXPECT_NE(end.exit_code, 0);
  EXPECT_NE(end.log_tail.find("comm.allreduce: a rank on "), std::string::npos) << end.log_tail;  // before MPI_Init returned
  EXPECT_NE(end.log_tail.find("made no progress for 12 s"), std::string::npos) << end.log_tail;
}

TEST(MultiNodeNccl, RunUnderMpirunWithoutMpiProbesIsRefused) {
  if (!have_mpirun()) SKIP_UNLESS_EXPECTED("NODEAUDIT_EXPECT_MPI", "mpirun not found on PATH (install openmpi-bin)");
  const fs::path dir = fresh_dir("run-mpi-refused");
  const LaunchEnd end =
      run_launcher(mpirun_np2({"run", "--only", "host.memory-bandwidth", "--out", (dir / "run.json").string()}),
                   (fs::temp_directory_path() / (fmt_name("run-mpi-refused") + ".log")).string(), 60, {});
  ASSERT_FALSE(end.timed_out) << end.log_tail;
  EXPECT_EQ(end.exit_code, 2) << end.log_tail;
  const std::string line = "nodeaudit: run under an MPI launcher: none of the planned probes runs across MPI ranks";
  const auto first = end.log_tail.find(line);
  EXPECT_NE(first, std::string::npos) << end.log_tail;
  EXPECT_EQ(end.log_tail.find(line, first + 1), std::string::npos) << "rank 0 alone says it: " << end.log_tail;
  EXPECT_TRUE(files_in(dir).empty()) << "no partial file";
  fs::remove_all(dir);
}
