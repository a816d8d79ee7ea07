// An MPI rank program for the tests: runs the host-fabric rank side with a fault on rank 1.
//   mismatch  rank 1 presents another nodeaudit build
//   hang      rank 1 never joins (sleeps); rank 0's watchdog must end the job
//   die       rank 1 waits to be killed (the test sends SIGKILL once rank 0 kept two sizes; rank 1
//             leaves its pid in $NODEAUDIT_TEST_PID_DIR/rank1.pid); rank 0 keeps its figures as
//             `run` does, printing each kept entry as one line ("kept sizes=N status=S: reason"),
//             and takes SIGTERM as `run` does (a flag), so its last words can be observed
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "comm/host_fabric_rank.hpp"
#include "comm/mpi_session.hpp"

using namespace nodeaudit;
using namespace nodeaudit::comm;

namespace {

std::atomic<bool> stop_flag{false};
void on_signal(int) { stop_flag = true; }

void print_kept(const nlohmann::json& entry) {
  std::printf("kept sizes=%d status=%s: %s\n", entry["info"].value("sizes_checked", 0),
              entry.value("status", "?").c_str(), entry.value("reason", "").c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const int rank = std::atoi(std::getenv("OMPI_COMM_WORLD_RANK") ? std::getenv("OMPI_COMM_WORLD_RANK") : "0");
  HostFabricPlan plan;
  plan.max_bytes = mode == "die" ? (256u << 20) : 1024;
  plan.rank_timeout_s = mode == "hang" ? 3 : 30;
  if (mode == "hang" && rank == 1) std::this_thread::sleep_for(std::chrono::seconds(60));
  if (mode == "die" && rank == 1) {
    const char* dir = std::getenv("NODEAUDIT_TEST_PID_DIR");
    std::ofstream(std::string(dir ? dir : "/tmp") + "/rank1.pid") << getpid() << "\n";
  }
  signal(SIGTERM, on_signal);
  ProbeContext ctx(ParamValues{}, RunSettings{}, &stop_flag, std::chrono::steady_clock::now() + std::chrono::seconds(120));
  if (mode == "die" && rank == 0) ctx.set_partial_keeper(print_kept, [&ctx](const Outcome& o) {
    return nlohmann::json{{"status", to_string(o.status)}, {"reason", o.reason}, {"info", ctx.info()}};
  });
  RankIdentity mine = this_rank_identity(rank);
  if (mode == "mismatch" && rank == 1) mine.version = "9.9.9-other";
  const Outcome outcome = measure_host_fabric_as_rank(ctx, plan, &mine);
  if (rank == 0) std::printf("outcome %s: %s\n", to_string(outcome.status).c_str(), outcome.reason.c_str());
  return 0;
}
