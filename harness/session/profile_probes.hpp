// A few probes run for a profile exactly as `run --profile` runs them (each in its own child, under
// its deadline, with telemetry alongside; the profile's parameters and step demand; a probe the
// profile leaves out recorded as skipped with the reason), for an application that needs some of
// this node's figures beside its own: `learn --audit`. Their entries go into the caller's document;
// they have no result file of their own.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/probe.hpp"
#include "harness/score/profile.hpp"
#include "harness/session/workload.hpp"

namespace nodeaudit::session {

struct ProfileProbesRequest {
  std::string profile_path;  // the profile the probes are run for
  std::string data_dir;      // the storage probes' directory (empty: the default)
  std::string python;        // the interpreter a probe that runs Python runs in (empty: the default)
  std::function<std::vector<std::string>(const score::Profile&)> probe_ids;  // which probes, in order
  std::string announce;  // said on stderr before each probe runs: "<announce>: ID ..."
};

// The planned probes' entries (results/SCHEMA.md `probes[]`); none after an interrupt.
nlohmann::json run_profile_probes(const ProfileProbesRequest& request, const std::atomic<bool>& interrupt);

// The entry of a probe the profile leaves out of a run (left_out_by_profile): skipped with the
// reason. std::nullopt for a probe to run.
std::optional<nlohmann::json> entry_left_out_by_profile(const ProbeSpec& spec, const RunExtras& extras,
                                                        bool only_given);

}  // namespace nodeaudit::session
