// The noise band a change must leave before compare calls it: the spread between runs of this
// node, from rounds (every result since rounds exist carries at least two; `--rounds N` more) and/or
// several baseline files. The interval of the median inside one run is not it: consecutive
// repetitions of one process share clocks, file placement and page cache state, so that interval is
// narrower than what a second run sees.
//
// spread = (max - min) / median of the per-run figures (each round's median; a file without rounds
// gives its one median), the wider of the two sides: what the user is shown. With fewer than two
// figures on both sides the between-run noise of this node is not measured, and nothing stands in for
// it: no figure measured on another machine ever widens the band (compare.hpp says how such a change
// is judged).
//
// The band is the rule every verdict uses (harness/core/change_test.hpp): half the 99% Student-t
// interval of the difference of the two sides' means, t(0.995, df) x s x sqrt(1/n_baseline +
// 1/n_candidate), with s the pooled standard deviation of the runs of both sides and df their
// degrees of freedom; the change is measured between the same means, so centre and interval agree.
// With two rounds a side s rests on two differences, and the t quantile (9.9 at df 2 against 2.6 for a
// known spread) keeps a by-chance narrow pair of rounds from calling noise a change. A tail figure
// (p90/p95/p99/p999, a latency or step-time maximum) takes half as much again: a tail is an extreme
// of a few hundred samples per round, its round-to-round distribution skewed with a long upper side.
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
  double spread_pct = 0;  // measured between-run spread (relative range); 0 when not measured
  double band_pct = 0;    // the change a figure must exceed (see above); 0 when not measured
  bool tail = false;      // a tail figure: the band is widened by half
  bool measured = false;  // false: neither side had two runs
  std::string source;     // "baseline 3 runs 2.1%, candidate 3 runs 1.0%" or why not measured
  std::string statistic;  // the rule's own account: "99% t-interval of the difference of means, 3 + 3 runs: ..."
  double width_pct() const { return band_pct; }
};

NoiseBand noise_band(const std::vector<double>& baseline_runs, const std::vector<double>& candidate_runs,
                     const std::string& metric);

// Mean of the per-run figures: the centre a change is measured from, as the band's interval is.
double centre_of(std::span<const double> runs);

}  // namespace nodeaudit::report
