// How the MPI probes get their ranks. Two ways, both ending with rank 0 holding every figure:
//  - self-launch: a probe that is not inside an MPI job starts one itself,
//      mpirun [--hostfile F] -np N <this binary> probe <id> --level L --PARAM V ...
//    with NODEAUDIT_COMM_REPORT=stdout: rank 0 streams its progress and reports on its stdout,
//    which the launcher forwards from whichever host it runs on (rank_stream.hpp); the other
//    ranks write nothing. This is what `nodeaudit run --only comm.host-fabric` does.
//  - user-launched: `mpirun -np N nodeaudit probe <id>` (or srun --mpi=pmix); each process is a
//    rank and joins directly.
// Host-only: no MPI header here, so the launch logic is tested without MPI.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/process_group.hpp"

namespace nodeaudit::comm {

struct MpiJobInfo {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
};
using EnvLookup = std::function<const char*(const char*)>;

// A non-negative whole number from the environment variable `name`; std::nullopt when unset, empty
// or not such a number.
std::optional<int> env_int(const EnvLookup& env, const char* name);
// Inside an MPI job started by mpirun/srun (Open MPI, PMIx or PMI variables)? Slurm's own
// SLURM_PROCID is not used: a batch script has it without being an MPI rank.
std::optional<MpiJobInfo> detect_mpi_job(const EnvLookup& env);

// True when this process is the isolated child `nodeaudit run` started (`--child-out` in argv).
bool is_isolated_run_child(const std::vector<std::string>& own_argv);
std::vector<std::string> read_own_argv();

struct LaunchPlan {
  std::string mpirun = "mpirun";
  int ranks = 2;                 // 0: one rank per slot the allocation or hostfile gives
  std::string hostfile;          // empty: the launcher's default (local host, Slurm allocation)
  std::string extra_args;        // split on spaces, passed before the program
  bool as_root = false;          // Open MPI refuses root without --allow-run-as-root
  std::string self_exe;
  std::string probe_id;
  std::string level;             // quick|standard|soak
  std::vector<std::pair<std::string, std::string>> params;  // --name value for the ranks
};
std::vector<std::string> launch_command(const LaunchPlan& plan);
// Why a self-started job cannot use this hostfile, checked before any rank starts: missing or
// unreadable, no host in it, or a host name that does not resolve (line and name). nullopt: usable.
std::optional<std::string> hostfile_problem(const std::string& path);
// The hosts a hostfile names, in order, each once (empty when it cannot be read).
std::vector<std::string> hostfile_hosts(const std::string& path);

struct LaunchEnd : GroupEnd {
  std::string log_tail;  // last lines of the launcher's combined stdout/stderr, without rank 0's report
};
using LaunchWatch = GroupWatch;
// run_in_own_group (harness/core/process_group.hpp) for a launcher: its whole process group is killed
// past `timeout_s`, once `should_stop` says so, or once `watch` gives a reason.
LaunchEnd run_launcher(const std::vector<std::string>& args, const std::string& log_path, double timeout_s,
                       const std::function<bool()>& should_stop, const LaunchWatch& watch = {});

// A rank the launcher saw die, from Open MPI's words ("mpirun noticed that process rank 1 with PID
// 0 on node h2 exited on signal 9 (Killed)", or its non-zero-exit report).
struct DeadRank {
  int rank = -1;
  std::string host;    // empty when the launcher did not name it
  std::string how;     // "was killed by signal 9 (Killed)", "exited with code 124"
};
std::optional<DeadRank> dead_rank_in(const std::string& launcher_output);
std::string describe(const DeadRank& dead);

// One line for a launch that did not leave a report: why, and the launcher's last words.
std::string describe_failed_launch(const LaunchEnd& end, double timeout_s);

}  // namespace nodeaudit::comm
