#include "comm/mpi_session.hpp"

#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/core/registry.hpp"
#include "harness/core/version.hpp"
#include "harness/node/env.hpp"

namespace nodeaudit::comm {

namespace {

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

// Open MPI allows one MPI_Init per process: the first session initialises, the process's exit
// finalises (a rank that returns without MPI_Finalize makes mpirun report an error).
// Thread level SINGLE, as NetPIPE and nccl-tests (MPI_Init): only this thread calls MPI (the
// watchdog and NCCL's threads never do), and Open MPI turns its internal locks on for any level
// above SINGLE (opal_set_using_threads), which measured +0.05 us per one-way 8 B message on
// shared memory here (0.31 vs 0.26 us) — a cost the reference tools do not pay.
void initialise_once() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return;
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SINGLE, &provided);
  std::atexit(finalize_at_exit);
}

}  // namespace

MpiSession::MpiSession(std::string probe_id, double watchdog_s)
    : probe_id_(std::move(probe_id)), watchdog_s_(watchdog_s),
      limit_(std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                    std::chrono::duration<double>(watchdog_s))),
      host_(host_name()) {
  // Armed before MPI_Init: Open MPI's start-up waits for every rank, so a rank that never comes
  // would block it forever.
  watchdog_ = std::thread([this] { watch(); });
  initialise_once();
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::lock_guard lock(mutex_);
  rank_ = rank, size_ = size, phase_ = "identity check";
}

MpiSession::~MpiSession() {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  done_cv_.notify_all();
  watchdog_.join();
}

void MpiSession::set_phase(const std::string& phase) {
  std::lock_guard lock(mutex_);
  phase_ = phase;
}

void MpiSession::progress() {
  std::function<void(const std::string&)> hook;
  std::string phase;
  {
    std::lock_guard lock(mutex_);
    limit_ = std::chrono::steady_clock::now() +
             std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(watchdog_s_));
    hook = progress_hook_;
    phase = phase_;
  }
  if (hook) hook(phase);
}

void MpiSession::set_progress_hook(std::function<void(const std::string& phase)> hook) {
  std::lock_guard lock(mutex_);
  progress_hook_ = std::move(hook);
}

void MpiSession::set_last_words(LastWords last_words) {
  std::lock_guard lock(mutex_);
  last_words_ = std::move(last_words);
}

void MpiSession::set_stop_check(std::function<bool()> stopped) {
  std::lock_guard lock(mutex_);
  stopped_ = std::move(stopped);
}

void MpiSession::say_last_words(Status status, const std::string& why) {
  LastWords last_words;
  {
    std::lock_guard lock(mutex_);
    last_words = last_words_;
  }
  if (last_words) last_words(status, why);
}

void MpiSession::watch() {
  const auto who = [this] {
    return rank_ < 0 ? fmt::format("a rank on {}", host_) : fmt::format("rank {} of {} ({})", rank_, size_, host_);
  };
  std::unique_lock lock(mutex_);
  while (!done_) {
    // progress() moves limit_; the short wake-ups poll the stop flag a signal handler set.
    done_cv_.wait_until(lock, std::min(limit_, std::chrono::steady_clock::now() + std::chrono::milliseconds(25)));
    if (done_) break;
    if (stopped_ && !stop_said_ && stopped_()) {
      stop_said_ = true;
      const std::string why = fmt::format("{} was stopped by a signal during {} (the launcher stops every rank when one "
                                          "rank died or the job was cancelled)", who(), phase_);
      lock.unlock();
      say_last_words(Status::failed, why);
      lock.lock();
      continue;
    }
    if (std::chrono::steady_clock::now() < limit_) continue;
    const std::string why = fmt::format("{} made no progress for {:.0f} s in {} (a peer rank died or hangs, or its host "
                                        "is unreachable)", who(), watchdog_s_, phase_);
    std::fprintf(stderr, "nodeaudit %s: %s; ending this rank\n", probe_id_.c_str(), why.c_str());
    std::fflush(stderr);
    lock.unlock();
    say_last_words(Status::timeout, why);
    _exit(124);
  }
}

std::vector<RankIdentity> MpiSession::exchange_identities(const RankIdentity& mine) const {
  const std::string wire = encode_identity(mine);
  std::vector<char> all(identity_wire_bytes * static_cast<std::size_t>(size_));
  MPI_Allgather(wire.data(), static_cast<int>(identity_wire_bytes), MPI_CHAR, all.data(),
                static_cast<int>(identity_wire_bytes), MPI_CHAR, MPI_COMM_WORLD);
  std::vector<RankIdentity> ids;
  for (int r = 0; r < size_; ++r) ids.push_back(decode_identity(all.data() + identity_wire_bytes * static_cast<std::size_t>(r), r));
  return ids;
}

bool MpiSession::all_agree(bool mine) const {
  int local = mine ? 1 : 0, all = 0;
  MPI_Allreduce(&local, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return all != 0;
}

int MpiSession::broadcast_from_root(int value) const {
  MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return value;
}

std::vector<std::vector<double>> MpiSession::gather_to_root(const std::vector<double>& mine) const {
  const int count = static_cast<int>(mine.size());
  std::vector<double> all(rank_ == 0 ? mine.size() * static_cast<std::size_t>(size_) : 0);
  MPI_Gather(mine.data(), count, MPI_DOUBLE, all.data(), count, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  std::vector<std::vector<double>> per_rank;
  if (rank_ != 0) return per_rank;
  for (int r = 0; r < size_; ++r) per_rank.emplace_back(all.begin() + r * count, all.begin() + (r + 1) * count);
  return per_rank;
}

std::uint64_t MpiSession::sum_to_root(std::uint64_t mine) const {
  unsigned long long local = mine, total = 0;
  MPI_Reduce(&local, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  return total;
}

std::uint64_t MpiSession::min_over_ranks(std::uint64_t mine) const {
  unsigned long long local = mine, smallest = 0;
  MPI_Allreduce(&local, &smallest, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
  return smallest;
}

double MpiSession::mean_over_ranks(double mine) const {
  double total = 0;
  MPI_Allreduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return total / size_;
}

std::vector<std::string> MpiSession::allgather_fixed(const std::string& wire, std::size_t bytes) const {
  std::string padded = wire;
  padded.resize(bytes, '\0');
  std::vector<char> all(bytes * static_cast<std::size_t>(size_));
  MPI_Allgather(padded.data(), static_cast<int>(bytes), MPI_CHAR, all.data(), static_cast<int>(bytes), MPI_CHAR,
                MPI_COMM_WORLD);
  std::vector<std::string> per_rank;
  for (int r = 0; r < size_; ++r) per_rank.emplace_back(all.data() + bytes * static_cast<std::size_t>(r), bytes);
  return per_rank;
}

void MpiSession::broadcast_bytes(void* data, std::size_t bytes) const {
  MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, 0, MPI_COMM_WORLD);
}

std::vector<std::uint64_t> MpiSession::gather_counts(const std::vector<std::uint64_t>& mine) const {
  std::vector<unsigned long long> local(mine.begin(), mine.end());
  std::vector<unsigned long long> all(rank_ == 0 ? mine.size() * static_cast<std::size_t>(size_) : 0);
  MPI_Gather(local.data(), static_cast<int>(local.size()), MPI_UNSIGNED_LONG_LONG, all.data(),
             static_cast<int>(local.size()), MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  return {all.begin(), all.end()};
}

int MpiSession::shared_memory_local_rank() const {
  MPI_Comm node_comm = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node_comm);
  int local = 0;
  MPI_Comm_rank(node_comm, &local);
  MPI_Comm_free(&node_comm);
  return local;
}

RankIdentity this_rank_identity(int rank) { return RankIdentity{rank, host_name(), version_string(), git_commit()}; }

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<std::size_t>(length));
  if (const auto eol = version.find_first_of("\n,"); eol != std::string::npos) version.resize(eol);
  return version;
}

namespace {
void add_mpi_version(nlohmann::json& env) { env["software"]["mpi"] = mpi_library_version(); }
const EnvContributorRegistrar mpi_env{add_mpi_version};
}  // namespace

}  // namespace nodeaudit::comm
