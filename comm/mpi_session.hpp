// One MPI rank's session: MPI_Init/MPI_Finalize, the identity check that refuses ranks of
// different nodeaudit builds, agreement helpers so every rank takes the same branch, and a
// watchdog: when a peer dies or hangs, the blocking MPI call never returns, so past its deadline
// the watchdog prints which phase stalled and ends this rank (exit 124). mpirun then ends the job.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rank_merge.hpp"

namespace nodeaudit::comm {

class MpiSession {
 public:
  // Initialises MPI (thread level funneled: only this thread calls MPI) and arms the watchdog.
  MpiSession(std::string probe_id, double watchdog_s);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // What the watchdog names if it fires ("ping-pong at 4 MiB").
  void set_phase(const std::string& phase);

  // Every rank's identity, on every rank.
  std::vector<RankIdentity> exchange_identities(const RankIdentity& mine) const;
  // True on every rank when `mine` is true on every rank.
  bool all_agree(bool mine) const;
  int broadcast_from_root(int value) const;
  // Rank 0 receives every rank's values (equal counts); others get an empty vector.
  std::vector<std::vector<double>> gather_to_root(const std::vector<double>& mine) const;
  std::uint64_t sum_to_root(std::uint64_t mine) const;

 private:
  void watch(double watchdog_s);

  std::string probe_id_;
  int rank_ = -1;  // until MPI_Init returns
  int size_ = 0;
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::string phase_ = "MPI start-up (MPI_Init waits for every rank)";
  std::thread watchdog_;
};

RankIdentity this_rank_identity(int rank);
// "Open MPI v4.1.4, ..." first line of MPI_Get_library_version (callable before MPI_Init).
std::string mpi_library_version();

}  // namespace nodeaudit::comm
