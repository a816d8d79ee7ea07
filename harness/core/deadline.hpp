// How long one run of a probe may take before it is ended as a timeout: the probe's own limit
// for the level (or the level's default), grown in proportion to a --repetitions above the level's.
#pragma once

#include "harness/core/context.hpp"
#include "harness/core/probe.hpp"

namespace nodeaudit {

// The wall-clock limit for one run of `spec` with `params` at the settings' level; a --repetitions
// above the level's own grows it in proportion (a backstop sized for 5 repetitions would end 50).
double probe_deadline_s(const ProbeSpec& spec, const ParamValues& params, const RunSettings& settings);
// A limit sized for the level's repetitions, grown for the settings' --repetitions.
double deadline_for_repetitions(double at_level, const RunSettings& settings);

}  // namespace nodeaudit
