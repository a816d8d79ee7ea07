// The noise band a change must leave before compare calls it: the spread between runs of this
// node, from rounds (every result since rounds exist carries at least two; `--rounds N` more) and/or
// several baseline files. The interval of the median inside one run is not it: consecutive
// repetitions of one process share clocks, file placement and page cache state, so that interval is
// narrower than what a second run sees.
//
// spread = (max - min) / median of the per-run figures (each round's median; a file without rounds
// gives its one median), the wider of the two sides. With fewer than two figures on both sides the
// between-run noise of this node is not measured, and nothing stands in for it: no figure measured
// on another machine ever widens the band (compare.hpp says how such a change is judged).
//
// The band is a multiple of the spread: twice for a median-like figure, three times for a tail
// figure (p90/p95/p99/p999, a latency or step-time maximum). A tail is an extreme of a few hundred
// samples per round: its round-to-round distribution is skewed with a long upper side, so the range
// of a few rounds understates how far the next round's tail lands more than it does for a median.
#pragma once

#include <span>
#include <string>
#include <vector>

namespace nodeaudit::report {

// (max - min) / |median| in percent; 0 with fewer than two values or a median of 0.
double relative_spread_pct(std::span<const double> values);

// True for a figure that is a tail of its samples: a name token p90/p95/p99/p999..., or a
// latency/step-time maximum.
bool is_tail_figure(const std::string& metric);

struct NoiseBand {
  double spread_pct = 0;     // measured between-run spread; 0 when not measured
  double multiple = 2;       // the band is multiple x spread_pct (3 for tail figures)
  bool measured = false;     // false: neither side had two runs
  std::string source;        // "baseline 3 runs 2.1%, candidate 3 runs 1.0%" or why not measured
  double width_pct() const { return multiple * spread_pct; }
};
NoiseBand noise_band(const std::vector<double>& baseline_runs, const std::vector<double>& candidate_runs,
                     const std::string& metric);

// Median of the per-run figures (the centre a change is measured from).
double centre_of(std::span<const double> runs);

}  // namespace nodeaudit::report
