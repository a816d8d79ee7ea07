// The noise band a change must leave before compare calls it: the spread between runs of the same
// node, from rounds (`--rounds N`) and/or several baseline files. The interval of the median inside
// one run is not it: consecutive repetitions of one process share clocks, file placement and page
// cache state, so that interval is narrower than what a second run sees.
//
// spread = (max - min) / median of the per-run figures (each round's median; a file without rounds
// gives its one median), the wider of the two sides. With fewer than two figures on both sides the
// between-run noise is unknown and a per-metric floor measured on real nodes stands in (the table
// in noise_band.cpp says where each floor comes from).
#pragma once

#include <span>
#include <string>
#include <vector>

namespace nodeaudit::report {

struct NoiseFloor {
  double spread_pct = 0;
  std::string source;  // where the figure comes from
};
// The floor for one metric of one probe: the most specific entry of the table.
NoiseFloor noise_floor(const std::string& probe, const std::string& metric);

// (max - min) / |median| in percent; 0 with fewer than two values or a median of 0.
double relative_spread_pct(std::span<const double> values);

struct NoiseBand {
  double spread_pct = 0;
  bool measured = false;  // false: neither side had two runs; `spread_pct` is the floor
  std::string source;     // "baseline 3 runs 2.1%, candidate 3 runs 1.0%" or the floor's source
};
NoiseBand noise_band(const std::vector<double>& baseline_runs, const std::vector<double>& candidate_runs,
                     const std::string& probe, const std::string& metric);

// Median of the per-run figures (the centre a change is measured from).
double centre_of(std::span<const double> runs);

}  // namespace nodeaudit::report
