// Rounds: every probe of a run measured N times, interleaved (round r runs the plan rotated by r),
// so one result file carries its own between-run spread. Rounds rather than more repetitions
// because repetitions inside one process are correlated (same clocks, same file placement, same
// page-cache state); a fresh child process per round is what a second `nodeaudit run` would see.
#pragma once

#include <cstddef>
#include <vector>

#include <nlohmann/json.hpp>

namespace nodeaudit {

// The order of the plan's probes in round `round` (0-based): rotated left by `round`, so no probe
// always runs first (cold caches) or last (warm machine).
std::vector<std::size_t> round_order(std::size_t probe_count, int round);

// One probe entry from the entries of its rounds (results/SCHEMA.md, "Rounds"): metrics pooled
// (every round's samples, statistics recomputed) with `round_medians` beside them; status the first
// round that was not ok; disturbance the worst round's. With `planned_rounds` 1 and one entry the
// entry is returned as it is. `entries` must not be empty.
nlohmann::json merge_rounds(const std::vector<nlohmann::json>& entries, int planned_rounds);

}  // namespace nodeaudit
