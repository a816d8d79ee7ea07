// The scorer's public interface: load a workload profile, score a result against it, print the
// assessment. assess() is pure: a profile and a result document in, an assessment document out
// (its fields are described in results/SCHEMA.md, "## assessment").
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/score/cost.hpp"
#include "harness/score/profile.hpp"
#include "harness/score/target_gpus.hpp"

namespace nodeaudit::score {

// NAME (a shipped profile under profiles_dir()) or a path to a .toml file. Throws UsageError
// ("profiles/x.toml:12:5: unknown key 'foo' in [model]; accepted: ...") on any bad input.
Profile load_profile(const std::string& name_or_path);
std::vector<std::string> shipped_profile_names();
// $NODEAUDIT_PROFILE_DIR, else <exe dir>/../profiles or <exe dir>/../../profiles when it exists,
// else the source tree's profiles/.
std::string profiles_dir();

nlohmann::json assess(const Profile& profile, const nlohmann::json& result, const CostOptions& cost);
// For GPUs the node does not have (or instead of its own): GPU-side figures from the GPU table,
// labelled; the assessment's "target_gpus" block says so. nullptr = the node as measured.
nlohmann::json assess(const Profile& profile, const nlohmann::json& result, const CostOptions& cost,
                      const TargetGpus* target);
// A learned job (model.hpp's JobDemand: its profile and what it measured about itself) rather than a
// profile's declared demand alone: the same assessment from the one prediction model.
struct JobDemand;
nlohmann::json assess(const JobDemand& job, const nlohmann::json& result, const CostOptions& cost, const TargetGpus* target);
std::string render_assessment(const nlohmann::json& assessment);  // terminal text, plain
// The three sentences a run ends with: the verdict (for the target GPUs when given), the first
// bottleneck with its figure and need, and the cost of one effective run (or how to get it).
std::string render_summary(const nlohmann::json& assessment);
int exit_code_for(const nlohmann::json& assessment);              // 1 when the overall verdict is FAIL, else 0

// The profile as a JSON object with its derived figures (for `profiles show --format json`).
nlohmann::json profile_to_json(const Profile& profile);

}  // namespace nodeaudit::score
