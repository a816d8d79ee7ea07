// comm.host-fabric across real hosts: network namespaces on this machine, each with its own
// hostname, reached by Open MPI's daemons through a plm_rsh_agent script (netns-hosts.sh). The
// ranks talk TCP over veth pairs and a bridge; nothing leaves the namespaces made here.
// Faults are real: a rank killed with SIGKILL, a host's link taken down mid-sweep.
#include <gtest/gtest.h>

#include "tests/support/expect_gate.hpp"
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "comm/mpi_launch.hpp"

using namespace nodeaudit::comm;
namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

int shell(const std::string& command) { return std::system(command.c_str()); }

// Hosts h1..hN for one test; torn down (namespaces, bridge, their processes) when it ends.
class NamespaceHosts {
 public:
  explicit NamespaceHosts(int hosts)
      : tag_("nat" + std::to_string(getpid()) + "n" + std::to_string(sets_made_++ % 8)), dir_(fs::temp_directory_path() / tag_) {
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "tmp");
    const std::string log = (dir_ / "setup.log").string();
    if (geteuid() != 0) {
      why_not_ = "needs root (network namespaces)";
      return;
    }
    if (shell("command -v mpirun >/dev/null && command -v unshare >/dev/null && command -v ip >/dev/null") != 0) {
      why_not_ = "needs mpirun, unshare and ip (openmpi-bin, util-linux, iproute2)";
      return;
    }
    if (shell(script() + " up " + tag_ + " " + std::to_string(hosts) + " " + dir_.string() + " >" + log + " 2>&1") != 0)
      why_not_ = "could not make namespace hosts here: " + read_text(log);
  }
  ~NamespaceHosts() {
    shell(script() + " down " + tag_ + " >/dev/null 2>&1");
    fs::remove_all(dir_);
  }
  NamespaceHosts(const NamespaceHosts&) = delete;
  NamespaceHosts& operator=(const NamespaceHosts&) = delete;

  const std::string& why_not() const { return why_not_; }
  std::string hostfile() const { return (dir_ / "hostfile").string(); }
  std::string mpirun_args() const {
    std::string args = read_text(dir_ / "mpirun-args");
    while (!args.empty() && args.back() == '\n') args.pop_back();
    return args;
  }
  // A private TMPDIR for the nodeaudit under test, so its launcher log is found without guessing.
  fs::path tmp() const { return dir_ / "tmp"; }
  fs::path file(const std::string& name) const { return dir_ / name; }
  void slow(int host, const std::string& rate) const {
    shell(script() + " slow " + tag_ + " " + std::to_string(host) + " " + rate);
  }
  void link(int host, bool up) const {
    shell(script() + " link " + tag_ + " " + std::to_string(host) + (up ? " up" : " down"));
  }
  // Kills (SIGKILL) every nodeaudit process inside host `host`'s namespace; how many it found.
  int kill_nodeaudit_on(int host) const {
    const std::string ns = tag_ + "h" + std::to_string(host);
    return shell("pids=$(ip netns pids " + ns + " | while read p; do [ \"$(cat /proc/$p/comm 2>/dev/null)\" = nodeaudit ] && echo $p; done); "
                 "[ -n \"$pids\" ] && kill -9 $pids") == 0 ? 1 : 0;
  }

 private:
  static std::string script() { return std::string("bash ") + NODEAUDIT_TEST_DATA + "/netns-hosts.sh"; }
  static inline int sets_made_ = 0;
  std::string tag_;
  fs::path dir_;
  std::string why_not_;
};

nlohmann::json load_json(const fs::path& path) { return nlohmann::json::parse(read_text(path)); }

// True once `predicate` holds, polling for up to `limit_s`.
template <typename Predicate>
bool wait_for(Predicate predicate, double limit_s) {
  const auto until = clock_type::now() + std::chrono::duration<double>(limit_s);
  while (clock_type::now() < until) {
    if (predicate()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// The newest checkpoint rank 0 streamed to a self-launching probe has at least `sizes` sizes.
bool streamed_sizes_at_least(const fs::path& tmp, std::uint64_t sizes) {
  for (const auto& dir : fs::directory_iterator(tmp)) {
    std::ifstream in(dir.path() / "launcher.log");
    std::uint64_t best = 0;
    for (std::string line; std::getline(in, line);) {
      const auto at = line.find("nodeaudit-rank-report ");
      if (at == std::string::npos) continue;
      try {
        const auto j = nlohmann::json::parse(line.substr(at + 22));
        best = std::max(best, j["entry"]["info"].value("sizes_checked", std::uint64_t{0}));
      } catch (const std::exception&) {
      }
    }
    if (best >= sizes) return true;
  }
  return false;
}

std::vector<std::string> self_launch(const NamespaceHosts& hosts, const std::string& out, const std::string& max_size,
                                     const std::string& rank_timeout) {
  return {"env", "TMPDIR=" + hosts.tmp().string(), NODEAUDIT_BINARY, "probe", "comm.host-fabric",
          "--hostfile", hosts.hostfile(), "--ranks", "2", "--mpirun-args", hosts.mpirun_args(),
          "--max-size", max_size, "--rank-timeout", rank_timeout, "--out", out};
}

double seconds_since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }

}  // namespace

TEST(MultiHost, SelfLaunchedSweepCrossesHostsAndNamesThem) {
  NamespaceHosts hosts(2);
  if (!hosts.why_not().empty()) SKIP_UNLESS_EXPECTED("NODEAUDIT_EXPECT_NETNS", hosts.why_not());
  const std::string out = hosts.file("result.json").string();
  const LaunchEnd end = run_launcher(self_launch(hosts, out, "64KiB", "30s"), hosts.file("run.log").string(), 120, {});
  ASSERT_EQ(end.exit_code, 0) << end.log_tail;
  EXPECT_NE(end.log_tail.find("result written to " + out), std::string::npos) << end.log_tail;
  const auto doc = load_json(out);
  EXPECT_EQ(doc["multinode"]["hosts"], (nlohmann::json{"h1", "h2"})) << doc["multinode"].dump();
  EXPECT_EQ(doc["multinode"]["ranks"], 2);
  char here[256] = {};
  gethostname(here, sizeof here - 1);
  EXPECT_EQ(doc["multinode"]["launched_from"], here);
  const auto& probe = doc["probes"][0];
  ASSERT_EQ(probe["status"], "ok") << probe.dump(2);
  EXPECT_EQ(probe["info"]["pingpong_path"], "between hosts h1 and h2");
  EXPECT_EQ(probe["info"]["sizes_checked"], 14);  // 8 B .. 64 KiB
  EXPECT_EQ(probe["metrics"].size(), 3u * 14);
}

TEST(MultiHost, UserLaunchedRunWritesOnRankZerosHostAndNamesEveryHost) {
  NamespaceHosts hosts(3);
  if (!hosts.why_not().empty()) SKIP_UNLESS_EXPECTED("NODEAUDIT_EXPECT_NETNS", hosts.why_not());
  const std::string out = hosts.file("run.json").string();
  std::vector<std::string> args = {"mpirun", "--allow-run-as-root", "--hostfile", hosts.hostfile(), "-np", "3"};
  std::istringstream extra(hosts.mpirun_args());
  for (std::string w; extra >> w;) args.push_back(w);
  for (const char* a : {NODEAUDIT_BINARY, "run", "--only", "comm.host-fabric", "--out"}) args.push_back(a);
  args.push_back(out);
  const LaunchEnd end = run_launcher(args, hosts.file("run.log").string(), 120, {});
  ASSERT_EQ(end.exit_code, 0) << end.log_tail;
  EXPECT_NE(end.log_tail.find("result written to " + out + " on h1 (rank 0's host)"), std::string::npos) << end.log_tail;
  const auto doc = load_json(out);
  EXPECT_EQ(doc["multinode"]["hosts"], (nlohmann::json{"h1", "h2", "h3"})) << doc.dump(2);
  EXPECT_EQ(doc["probes"][0]["status"], "ok");
  EXPECT_EQ(doc["probes"][0]["info"]["pingpong_path"], "between hosts h1 and h2");
  // Off a terminal (a log file here): each figure printed once, by rank 0 alone; no progress escapes.
  const std::string log = read_text(hosts.file("run.log"));
  EXPECT_EQ(log.find('\033'), std::string::npos) << log;
  EXPECT_EQ(log.find('\r'), std::string::npos) << log;
  const std::string row = "pingpong_bw [ranks=3,size=8]";
  const auto first = log.find(row);
  ASSERT_NE(first, std::string::npos) << log;
  EXPECT_EQ(log.find(row, first + 1), std::string::npos) << log;
}

// Rank 1 killed after rank 0 reported two sizes: the probe ends on its own within the stated
// bound (--rank-timeout + 10 s, plus the launcher's 3 s kill grace and start-up slack), exits 1,
// names the dead rank, its host and the phase, and keeps every figure completed before.
TEST(MultiHost, KilledRankEndsTheProbeWithinTheBoundKeepingFigures) {
  NamespaceHosts hosts(2);
  if (!hosts.why_not().empty()) SKIP_UNLESS_EXPECTED("NODEAUDIT_EXPECT_NETNS", hosts.why_not());
  const std::string out = hosts.file("killed.json").string();
  auto run = std::async(std::launch::async, [&] {
    return run_launcher(self_launch(hosts, out, "256MiB", "5s"), hosts.file("run.log").string(), 240, {});
  });
  ASSERT_TRUE(wait_for([&] { return streamed_sizes_at_least(hosts.tmp(), 2); }, 90)) << read_text(hosts.file("run.log"));
  ASSERT_EQ(hosts.kill_nodeaudit_on(2), 1);
  const auto killed_at = clock_type::now();
  const LaunchEnd end = run.get();
  EXPECT_LT(seconds_since(killed_at), 5 + 10 + 3 + 10) << end.log_tail;
  EXPECT_EQ(end.exit_code, 1) << end.log_tail;
  const auto doc = load_json(out);
  const auto& probe = doc["probes"][0];
  EXPECT_EQ(probe["status"], "failed") << probe.dump(2);
  const std::string reason = probe["reason"];
  EXPECT_NE(reason.find("rank 1 on h2"), std::string::npos) << reason;
  EXPECT_TRUE(reason.find("ping-pong at") != std::string::npos || reason.find("all-reduce at") != std::string::npos) << reason;
  EXPECT_GE(probe["info"]["sizes_checked"].get<int>(), 2);
  EXPECT_GE(probe["metrics"].size(), 6u);
  EXPECT_EQ(doc["multinode"]["hosts"], (nlohmann::json{"h1", "h2"}));
}

// h2's link goes down mid-sweep: Open MPI cannot reach its daemon and would wait forever; the
// probe stops the launcher itself within the bound and keeps the figures.
TEST(MultiHost, LostHostEndsTheProbeWithinTheBoundKeepingFigures) {
  NamespaceHosts hosts(2);
  if (!hosts.why_not().empty()) SKIP_UNLESS_EXPECTED("NODEAUDIT_EXPECT_NETNS", hosts.why_not());
  const std::string out = hosts.file("lost.json").string();
  auto run = std::async(std::launch::async, [&] {
    return run_launcher(self_launch(hosts, out, "256MiB", "5s"), hosts.file("run.log").string(), 240, {});
  });
  ASSERT_TRUE(wait_for([&] { return streamed_sizes_at_least(hosts.tmp(), 2); }, 90)) << read_text(hosts.file("run.log"));
  hosts.link(2, false);
  const auto lost_at = clock_type::now();
  const LaunchEnd end = run.get();
  EXPECT_LT(seconds_since(lost_at), 5 + 10 + 3 + 10) << end.log_tail;
  EXPECT_FALSE(end.timed_out) << "the probe must end itself, not by the test's limit";
  EXPECT_EQ(end.exit_code, 1) << end.log_tail;
  const auto doc = load_json(out);
  const auto& probe = doc["probes"][0];
  EXPECT_TRUE(probe["status"] == "timeout" || probe["status"] == "failed") << probe.dump(2);
  const std::string reason = probe["reason"];
  // Either watchdog ends it, each by design: rank 0's own ("made no progress", when its last words
  // reach the launcher) or the probe's watch of rank 0's stream ("no word from rank 0", when the
  // launcher, busy with the lost host's daemon, forwards nothing more). Nothing else may.
  EXPECT_TRUE(reason.find("made no progress") != std::string::npos || reason.find("no word from rank 0") != std::string::npos)
      << reason;
  EXPECT_NE(reason.find("h2"), std::string::npos) << reason;
  EXPECT_GE(probe["metrics"].size(), 6u);
}

// Under the user's own mpirun, rank 0 keeps the figures in its result file as it goes: a rank
// killed mid-sweep leaves the probe's entry, failed and naming the phase, with the sizes done.
// `run` (a standard-level sweep, long enough to be cut) and `probe` keep them each their own way.
void user_launched_rank_dies(const std::vector<std::string>& command) {
  NamespaceHosts hosts(2);
  if (!hosts.why_not().empty()) SKIP_UNLESS_EXPECTED("NODEAUDIT_EXPECT_NETNS", hosts.why_not());
  const std::string out = hosts.file("user-killed.json").string();
  std::vector<std::string> args = {"mpirun", "--allow-run-as-root", "--hostfile", hosts.hostfile(), "-np", "2"};
  std::istringstream extra(hosts.mpirun_args());
  for (std::string w; extra >> w;) args.push_back(w);
  args.insert(args.end(), command.begin(), command.end());
  args.insert(args.end(), {"--out", out});
  auto run = std::async(std::launch::async, [&] { return run_launcher(args, hosts.file("run.log").string(), 240, {}); });
  const auto sizes_in_file = [&] {
    try {
      const auto doc = load_json(out);
      return !doc["probes"].empty() && doc["probes"][0]["info"].value("sizes_checked", 0) >= 2;
    } catch (const std::exception&) {
      return false;
    }
  };
  ASSERT_TRUE(wait_for(sizes_in_file, 90)) << read_text(hosts.file("run.log"));
  ASSERT_EQ(hosts.kill_nodeaudit_on(2), 1);
  const auto killed_at = clock_type::now();
  const LaunchEnd end = run.get();
  EXPECT_LT(seconds_since(killed_at), 10) << end.log_tail;  // SIGTERM, then SIGKILL a second later
  EXPECT_NE(end.exit_code, 0) << end.log_tail;             // mpirun's own code
  const auto doc = load_json(out);
  const auto& probe = doc["probes"][0];
  EXPECT_EQ(probe["status"], "failed") << probe.dump(2);
  EXPECT_GE(probe["info"]["sizes_checked"].get<int>(), 2);
  EXPECT_GE(probe["metrics"].size(), 6u);
  const std::string reason = probe["reason"];
  // Two endings are both real: mpirun's SIGTERM reaches rank 0's watchdog, which says its last words;
  // or rank 0 ends without a word (Open MPI ends it on losing the peer, or the SIGKILL that follows
  // the SIGTERM comes first on a loaded machine). Either way the kept reason names the step and h2.
  const auto said = reason.find("rank 0 of 2 (h1) was stopped by a signal during ");
  const auto silent = reason.find("the job ended during the ");
  EXPECT_TRUE(said != std::string::npos || silent != std::string::npos) << reason << "\n" << end.log_tail;
  const auto step = std::min(said, silent);
  EXPECT_NE(reason.find("h2", step), std::string::npos) << reason;  // the step names the peer host
  if (silent != std::string::npos) {
    EXPECT_NE(reason.find("rank 0 left no reason"), std::string::npos) << reason;
  }
  EXPECT_EQ(doc["multinode"]["hosts"], (nlohmann::json{"h1", "h2"}));
}

TEST(MultiHost, UserLaunchedRunKeepsFiguresWhenARankDies) {
  user_launched_rank_dies({NODEAUDIT_BINARY, "run", "--only", "comm.host-fabric", "--level", "standard"});
}

TEST(MultiHost, UserLaunchedProbeKeepsFiguresWhenARankDies) {
  user_launched_rank_dies({NODEAUDIT_BINARY, "probe", "comm.host-fabric", "--max-size", "256MiB"});
}

// Three hosts, h3's link limited to 50 Mbit/s both ways (tc tbf): --pairs measures the three pairs
// in three rounds and names h3, because every pair with it is slow.
TEST(MultiHost, PairsNameTheHostWhoseLinkIsThrottled) {
  NamespaceHosts hosts(3);
  if (!hosts.why_not().empty()) SKIP_UNLESS_EXPECTED("NODEAUDIT_EXPECT_NETNS", hosts.why_not());
  hosts.slow(3, "50mbit");
  const std::string out = hosts.file("pairs.json").string();
  const LaunchEnd end = run_launcher({NODEAUDIT_BINARY, "probe", "comm.host-fabric", "--pairs", "true", "--hostfile",
                                      hosts.hostfile(), "--mpirun-args", hosts.mpirun_args(), "--max-size", "256KiB", "--out", out},
                                     hosts.file("run.log").string(), 180, {});
  ASSERT_TRUE(end.exit_code == 0 || end.exit_code == 1) << end.log_tail;
  const auto probe = load_json(out)["probes"][0];
  ASSERT_EQ(probe["status"], "ok") << probe.dump(2);
  EXPECT_EQ(probe["info"]["pairs_schedule"], "round robin: 3 pairs of 3 hosts in 3 rounds, each round's pairs at once");
  int pair_metrics = 0;
  for (const auto& m : probe["metrics"]) pair_metrics += m["name"] == "pair_bw";
  EXPECT_EQ(pair_metrics, 3 * 2);  // 3 pairs x (8 B, 256 KiB)
  std::vector<std::string> slow_hosts;
  for (const auto& f : probe["findings"])
    if (f["code"] == "host_fabric.slow_host") slow_hosts.push_back(f["message"]);
  ASSERT_EQ(slow_hosts.size(), 1u) << probe["findings"].dump(2);
  EXPECT_EQ(slow_hosts[0].rfind("h3: ", 0), 0u) << slow_hosts[0];
  EXPECT_NE(slow_hosts[0].find("every pair with h3 is slow: h3's link or NIC"), std::string::npos) << slow_hosts[0];
}
