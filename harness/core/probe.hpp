// What a probe is: an id, a description, what it needs, its parameters, and a body that measures.
// A probe knows nothing about profiles, verdicts or output formats: it records metrics and findings
// through ProbeContext and returns an Outcome. The harness times, summarizes, scores and prints.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/figures.hpp"
#include "harness/core/measure.hpp"
#include "harness/core/metric.hpp"
#include "harness/core/param.hpp"
#include "harness/core/step_demand.hpp"

namespace nodeaudit {

enum class Need { gpu, multi_gpu, io_uring, mpi };
std::string to_string(Need need);

enum class Status { ok, skipped, failed, crashed, timeout, interrupted };
std::string to_string(Status status);
Status parse_status(const std::string& text);

// Errors are values at the probe boundary.
struct Outcome {
  Status status = Status::ok;
  std::string reason;
  // A failure caused by what the user asked for (a --path that does not exist, a block size the
  // device cannot do): `probe` exits 2 with the reason as its one-line error, `run` records the
  // probe as failed and exits 2 at the end.
  bool input_error = false;
  static Outcome ok() { return {}; }
  static Outcome bad_input(std::string why) { return {Status::failed, std::move(why), true}; }
  static Outcome skipped(std::string why) { return {Status::skipped, std::move(why)}; }
  static Outcome failed(std::string why) { return {Status::failed, std::move(why)}; }
  static Outcome interrupted() { return {Status::interrupted, "interrupted by signal"}; }
};

class ProbeContext;
struct RunSettings;
using ProbeBody = std::function<Outcome(ProbeContext&)>;

struct ProbeSpec {
  std::string id;           // "domain.name"
  std::string description;  // one line
  std::vector<Need> needs;
  std::vector<ParamSpec> params;
  ProbeBody body;  // empty when not built
  // Set when this build cannot run the probe: "no CUDA toolkit", "no MPI".
  std::optional<std::string> not_built_reason;
  // Wall-clock deadline for one run of this probe; past it the runner kills the probe (timeout).
  // When empty the runner uses the level's default deadline.
  std::function<double(const ParamValues&, Level)> deadline_s;
  // The probe joins an MPI job when an MPI launcher started nodeaudit (every rank runs it, rank 0
  // records): `mpirun -np N nodeaudit run` runs such probes in-process on every rank and only
  // rank 0 writes the result; other probes are recorded as skipped there.
  bool across_mpi_ranks = false;
  // The places this probe would write or read (--path, --data-dir), judged before `run` starts
  // its first probe: the reason they cannot be used, in the words the probe itself would say, or
  // empty. Empty function: the probe uses no place of the user's.
  std::function<std::string(const ParamValues&, const RunSettings&)> check_places;
  // Why a run for this workload leaves the probe out, because the workload's assessment never reads
  // its figures (host.decode for a profile that decodes nothing on the CPU), or empty to run it.
  // Asked only when a profile was given and the user did not name probes with --only.
  std::function<std::string(const StepDemand&)> left_out_for_demand;
  // What the probe's figures mean: its one line and each figure's declaration. Written in the
  // probe folder's figures.cpp (the probe catalogue, probe_catalogue.hpp), from which the registry
  // fills these, so the scorer and the reporters read the same words without linking the probe.
  std::string meaning;
  ProbeRole role = ProbeRole::measurement;
  std::vector<FigureSpec> figures;
};

}  // namespace nodeaudit
