#include "mpi_session.hpp"

#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "env.hpp"
#include "registry.hpp"
#include "version.hpp"

namespace nodeaudit::comm {

MpiSession::MpiSession(std::string probe_id, double watchdog_s) : probe_id_(std::move(probe_id)) {
  // Armed before MPI_Init: Open MPI's start-up waits for every rank, so a rank that never comes
  // would block it forever.
  watchdog_ = std::thread([this, watchdog_s] { watch(watchdog_s); });
  int provided = 0, rank = 0, size = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
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
  MPI_Finalize();
}

void MpiSession::set_phase(const std::string& phase) {
  std::lock_guard lock(mutex_);
  phase_ = phase;
}

void MpiSession::watch(double watchdog_s) {
  std::unique_lock lock(mutex_);
  const auto limit = std::chrono::steady_clock::now() + std::chrono::duration<double>(watchdog_s);
  if (done_cv_.wait_until(lock, limit, [this] { return done_; })) return;
  std::fprintf(stderr, "nodeaudit %s: rank %d of %d made no progress for %.0f s in %s (a peer rank died or hangs); ending this rank\n",
               probe_id_.c_str(), rank_, size_, watchdog_s, phase_.c_str());
  std::fflush(stderr);
  _exit(124);
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
