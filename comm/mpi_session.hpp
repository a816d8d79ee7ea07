// One MPI rank's session: MPI_Init/MPI_Finalize, the identity check that refuses ranks of
// different nodeaudit builds, agreement helpers so every rank takes the same branch, and a
// watchdog: when a peer dies or hangs, the blocking MPI call never returns, so once no progress
// was made for the watchdog's limit it says which phase stalled (its last words: rank, host,
// phase) and ends this rank (exit 124); mpirun then ends the job. When a peer dies the launcher
// itself sends this rank SIGTERM and SIGKILL about a second later: the watchdog sees the signal's
// flag within 25 ms and says its last words at once.
// MPI is initialised once per process and finalised at exit, so several MPI probes can run one
// after another in one rank (`mpirun -np N nodeaudit run --only 'comm.*'`).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "comm/rank_merge.hpp"
#include "harness/core/probe.hpp"

namespace nodeaudit::comm {

class MpiSession {
 public:
  // Initialises MPI once per process (thread level single: only this thread calls MPI) and arms the watchdog.
  MpiSession(std::string probe_id, double watchdog_s);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // What the watchdog names if it fires ("ping-pong at 4 MiB").
  void set_phase(const std::string& phase);
  // Progress was made: the watchdog's limit starts again from now. Without calls the limit
  // counts from the start of the session (comm.host-fabric's --rank-timeout).
  void progress();
  // Called on every progress() with the phase (the self-launched rank 0's progress line).
  void set_progress_hook(std::function<void(const std::string& phase)> hook);
  // What the rank leaves before it ends on a fault, called once from the watchdog's thread:
  // timeout (no progress) or failed (stopped by a signal mid-phase), and the sentence naming
  // this rank, its host and the phase.
  using LastWords = std::function<void(Status status, const std::string& why)>;
  void set_last_words(LastWords last_words);
  // Polled by the watchdog every 25 ms (mpirun's SIGKILL follows its SIGTERM by about a second):
  // true once a signal asked this process to stop. A phase blocked in MPI cannot look itself.
  void set_stop_check(std::function<bool()> stopped);

  // Every rank's identity, on every rank.
  std::vector<RankIdentity> exchange_identities(const RankIdentity& mine) const;
  // True on every rank when `mine` is true on every rank.
  bool all_agree(bool mine) const;
  int broadcast_from_root(int value) const;
  // Rank 0 receives every rank's values (equal counts); others get an empty vector.
  std::vector<std::vector<double>> gather_to_root(const std::vector<double>& mine) const;
  std::uint64_t sum_to_root(std::uint64_t mine) const;
  std::uint64_t min_over_ranks(std::uint64_t mine) const;
  double mean_over_ranks(double mine) const;
  // Every rank's `wire` (all exactly `bytes` long), on every rank, in rank order.
  std::vector<std::string> allgather_fixed(const std::string& wire, std::size_t bytes) const;
  // Rank 0's `bytes` at `data` on every rank.
  void broadcast_bytes(void* data, std::size_t bytes) const;
  // Rank 0 receives every rank's counts (equal lengths), flattened in rank order.
  std::vector<std::uint64_t> gather_counts(const std::vector<std::uint64_t>& mine) const;
  // This rank's index among the ranks sharing its node (MPI_Comm_split_type SHARED).
  int shared_memory_local_rank() const;

 private:
  void watch();
  void say_last_words(Status status, const std::string& why);

  std::string probe_id_;
  int rank_ = -1;  // until MPI_Init returns
  int size_ = 0;
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  double watchdog_s_ = 0;
  std::chrono::steady_clock::time_point limit_;
  std::string phase_ = "MPI start-up (MPI_Init waits for every rank)";
  std::string host_;
  std::function<void(const std::string&)> progress_hook_;
  LastWords last_words_;
  std::function<bool()> stopped_;
  bool stop_said_ = false;
  std::thread watchdog_;
};

RankIdentity this_rank_identity(int rank);
// "Open MPI v4.1.4, ..." first line of MPI_Get_library_version (callable before MPI_Init).
std::string mpi_library_version();

}  // namespace nodeaudit::comm
