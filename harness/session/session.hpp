// The session engine: one run of nodeaudit, from the settings to the result file.
//
// A run starts in harness/cli/main.cpp, which parses the command line with the options cmd_run.cpp
// declares and calls run_session() (run_session.cpp); it ends in finish_run() in the same file,
// which writes the result file for the last time, prints the summary and returns the exit code.
// `probe ID` (cmd_probe.cpp) is the same engine through probe_session() (probe_session.cpp): the
// user's one probe, the isolated child `run` starts for each probe, and a rank of an MPI job.
//
// On the way, the session opens with the settings (run_options.cpp checks them), the plan (the
// probes --only/--skip leave, and the profile parsed once into the step demand the probes that
// emulate a step receive: workload.cpp, core/step_demand.hpp) and the output (the result document with
// the node's environment, its file claimed: Session::open). Session::run_entry runs each planned
// probe into an entry in one of three places: a child process under a deadline with telemetry
// sampled alongside (probe_process.hpp), this process, or this process as one rank of an MPI job.
// After every entry Session::keep rewrites the result file atomically, so an interrupted or killed
// run keeps what it measured. Rounds (harness/core/rounds.cpp) repeat the plan, rotated, and pool each
// probe's entries; at the end workload.cpp scores the run for the profile.
#pragma once

#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/context.hpp"
#include "harness/core/probe.hpp"
#include "harness/session/probe_process.hpp"
#include "harness/session/result_file.hpp"
#include "harness/session/run_options.hpp"
#include "harness/session/workload.hpp"

namespace nodeaudit {
class Nvml;
}

namespace nodeaudit::session {

// `run` as the user typed it.
struct RunRequest {
  CommonOptions common;
  std::string only, skip;  // --only / --skip: probe ids or globs
  std::string telemetry_out;
  std::vector<std::string> argv;
  RunExtras extras;
};

// `probe ID` as the user (or `run`, for its child) typed it.
struct ProbeRequest {
  CommonOptions common;
  std::map<std::string, std::string> given;  // parameter name -> text, the parameters given only
  std::string child_out;                     // internal: the child of `run` writes its entry here
  std::string settings_json;                 // internal: the child's settings, step demand included
  double deadline_s = 0;                     // internal: the deadline `run` gave its child
};

// Both return the process's exit code (harness/cli/commands.hpp) and throw UsageError on bad input.
int run_session(RunRequest& request);
int probe_session(const ProbeSpec& spec, const ProbeRequest& request);

// Where a probe's body runs.
enum class Placement {
  child,       // a child process (`nodeaudit probe ID --child-out`), under a deadline, with telemetry
  in_process,  // this process: `probe ID`, the child itself
  mpi_rank,    // this process as one rank of an MPI job (every rank runs it; rank 0 records)
};

// How one entry is run: the parameter texts the probe gets and, by placement, what goes with them.
struct EntryRequest {
  std::map<std::string, std::string> param_texts;
  ProgressFn progress;               // child: called a few times a second while it runs
  int rounds = 1;                    // in_process: rounds measured here and pooled
  bool judge_foreign_load = false;   // in_process: each round records other processes' load
  double deadline_s = 0;             // in_process: 0 = the probe's own deadline
  ProbeContext::EntryKeeper keeper;  // in_process, mpi_rank: where figures so far are kept
};

class Session {
 public:
  // `nvml` (may be null) samples GPU telemetry beside a child; `telemetry_csv` keeps the series.
  Session(RunSettings settings, std::optional<int> mpi_rank, const std::atomic<bool>& interrupt,
          const Nvml* nvml = nullptr, std::string telemetry_csv = "");

  const RunSettings& settings() const { return settings_; }
  void set_round(int round_index) { settings_.round_index = round_index; }
  // The demand given to every probe that emulates a step (takes_step_demand).
  void set_step_demand(StepDemand demand) { step_demand_ = std::move(demand); }
  // This process writes and prints for the job: not a rank above 0 of an MPI job.
  bool writes() const { return !mpi_rank_ || *mpi_rank_ == 0; }
  const std::optional<int>& mpi_rank() const { return mpi_rank_; }
  bool interrupted() const { return interrupt_.load(); }

  // Begins the result: `doc` written as the first version of the file `out` names (claimed: see
  // claim_out_file) through the one result writer (result_file.hpp). Without `out` the document is
  // kept in memory only.
  void open(nlohmann::json doc, const std::optional<OutPath>& out);
  bool has_file() const { return result_file_.has_file(); }
  nlohmann::json& document() { return doc_; }
  const std::string& out_path() const { return result_file_.path(); }

  // Runs `spec` once (or request.rounds times in this process) and returns its entry
  // (results/SCHEMA.md `probes[]`); a probe's failure is in the entry, never thrown.
  nlohmann::json run_entry(const ProbeSpec& spec, Placement placement, const EntryRequest& request) const;
  // Rewrites the result file with the document as it stands (atomically: never half written).
  void keep() const;
  // An MPI probe's keeper (ProbeContext::keeper): the result file rewritten with `probes_so_far`
  // and the probe's entry as it stands. Called from the rank's watchdog thread too, so it works on
  // its own copy of the document as it is now.
  ProbeContext::EntryKeeper partial_entry_writer(nlohmann::json probes_so_far, bool note_telemetry) const;

 private:
  RunSettings settings_for(const ProbeSpec& spec) const;
  nlohmann::json entry_in_child(const ProbeSpec& spec, const EntryRequest& request) const;
  nlohmann::json entry_in_process(const ProbeSpec& spec, const EntryRequest& request) const;
  nlohmann::json entry_as_mpi_rank(const ProbeSpec& spec, const EntryRequest& request) const;

  RunSettings settings_;
  std::optional<int> mpi_rank_;
  const std::atomic<bool>& interrupt_;
  const Nvml* nvml_;
  std::string telemetry_csv_;
  std::optional<StepDemand> step_demand_;
  nlohmann::json doc_;
  ResultFile result_file_;
};

}  // namespace nodeaudit::session
