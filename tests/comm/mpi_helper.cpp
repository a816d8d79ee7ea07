// An MPI rank program for the tests: runs the host-fabric rank side with a fault on rank 1.
//   mismatch  rank 1 presents another nodeaudit build
//   hang      rank 1 never joins (sleeps); rank 0's watchdog must end the job
//   die       rank 1 is killed (SIGKILL) while the sweep runs
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "host_fabric_rank.hpp"
#include "mpi_session.hpp"

using namespace nodeaudit;
using namespace nodeaudit::comm;

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const int rank = std::atoi(std::getenv("OMPI_COMM_WORLD_RANK") ? std::getenv("OMPI_COMM_WORLD_RANK") : "0");
  HostFabricPlan plan;
  plan.max_bytes = mode == "die" ? (64u << 20) : 1024;
  plan.rank_timeout_s = mode == "hang" ? 3 : 30;
  if (mode == "hang" && rank == 1) std::this_thread::sleep_for(std::chrono::seconds(60));
  if (mode == "die" && rank == 1)
    std::thread([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(800));
      raise(SIGKILL);
    }).detach();
  std::atomic<bool> cancel{false};
  ProbeContext ctx(ParamValues{}, RunSettings{}, &cancel, std::chrono::steady_clock::now() + std::chrono::seconds(120));
  RankIdentity mine = this_rank_identity(rank);
  if (mode == "mismatch" && rank == 1) mine.version = "9.9.9-other";
  const Outcome outcome = measure_host_fabric_as_rank(ctx, plan, &mine);
  if (rank == 0) std::printf("outcome %s: %s\n", to_string(outcome.status).c_str(), outcome.reason.c_str());
  return 0;
}
