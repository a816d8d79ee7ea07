// How often the change rule (harness/core/change_test.hpp) calls a change where there is none, and
// how often it catches a real one, by simulation: every run's figure is mean x (1 + change) x
// (1 + scatter), the scatter drawn independently per run. Printed as Markdown tables (bench/stats/README.md).
//   change_rule_sim [TRIALS]     (default 20000 per cell; a fixed seed, so the tables reproduce)
// Three rules side by side on the same draws:
//   t99      the rule: the 99% pooled t-interval of the difference of means leaves 0 (learn --vary)
//   compare  the rule and |change| beyond compare's default 5% tolerance (what fails compare's gate)
//   range    the rule vary had before: medians differ by more than the larger of the two ranges
// Two scatters: normal, and Student-t with 3 degrees of freedom scaled to the same standard deviation
// (heavy tails: an occasional run far off, as a page-cache miss or a neighbour gives).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "harness/core/change_test.hpp"

namespace {

enum class Noise { normal, heavy_tailed };

struct Cell {
  int t99 = 0, compare = 0, range = 0;
};

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double range_of(const std::vector<double>& v) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return *hi - *lo;
}

class Draw {
 public:
  explicit Draw(unsigned seed) : engine_(seed) {}
  double scatter(Noise noise, double sd) {
    if (noise == Noise::normal) return sd * normal_(engine_);
    // t(3) has variance 3: scale by 1/sqrt(3) for the same standard deviation.
    return sd * student3_(engine_) / std::sqrt(3.0);
  }

 private:
  std::mt19937_64 engine_;
  std::normal_distribution<double> normal_{0.0, 1.0};
  std::student_t_distribution<double> student3_{3.0};
};

Cell simulate(Draw& draw, Noise noise, double sd, int runs, double change, int trials) {
  Cell cell;
  std::vector<double> base(runs), cand(runs);
  for (int trial = 0; trial < trials; ++trial) {
    for (int i = 0; i < runs; ++i) {
      base[i] = 100.0 * (1 + draw.scatter(noise, sd));
      cand[i] = 100.0 * (1 + change) * (1 + draw.scatter(noise, sd));
    }
    const nodeaudit::ChangeTest test = nodeaudit::test_change(base, cand);
    cell.t99 += test.significant();
    cell.compare += test.significant() && std::fabs(test.change) > 0.05;
    cell.range += std::fabs(median_of(cand) - median_of(base)) > std::max(range_of(base), range_of(cand));
  }
  return cell;
}

std::string percent(int count, int trials) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100.0 * count / trials);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  const int trials = argc > 1 ? std::max(100, std::atoi(argv[1])) : 20000;
  Draw draw(20261207);
  const double changes[] = {0.0, 0.05, 0.10, 0.20};
  for (const Noise noise : {Noise::normal, Noise::heavy_tailed}) {
    for (const double sd : {0.02, 0.05}) {
      std::printf("\n%s scatter, standard deviation %.0f%% of the figure between runs, %d trials a cell\n\n",
                  noise == Noise::normal ? "normal" : "heavy-tailed (t, 3 df)", sd * 100, trials);
      std::printf("| runs a side | rule | false calls (no change) | power at 5%% | power at 10%% | power at 20%% |\n");
      std::printf("|---|---|---|---|---|---|\n");
      for (const int runs : {2, 3, 5}) {
        Cell cells[4];
        for (int c = 0; c < 4; ++c) cells[c] = simulate(draw, noise, sd, runs, changes[c], trials);
        const auto row = [&](const char* name, int Cell::*field) {
          std::printf("| %d | %s |", runs, name);
          for (const Cell& cell : cells) std::printf(" %s |", percent(cell.*field, trials).c_str());
          std::printf("\n");
        };
        row("t99 (the rule)", &Cell::t99);
        row("compare (t99 and beyond 5%)", &Cell::compare);
        row("range (vary's rule before)", &Cell::range);
      }
    }
  }
  return 0;
}
