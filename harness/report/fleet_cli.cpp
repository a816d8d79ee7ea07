#include "harness/report/fleet_cli.hpp"

#include "harness/core/errors.hpp"
#include "harness/core/result.hpp"
#include "harness/core/table.hpp"
#include "harness/report/cli_args.hpp"
#include "harness/report/fleet_load.hpp"
#include "harness/report/fleet_render.hpp"

namespace nodeaudit::report {

FleetOptions parse_fleet_options(const FleetOptionText& text) {
  FleetOptions options;
  options.fail_on_drift = text.fail_on_drift;
  options.all_runs = text.all_runs;
  if (!text.outlier_mad.empty()) {
    const double k = parse_amount("--outlier-mad", text.outlier_mad);
    if (k <= 0) throw UsageError("--outlier-mad " + text.outlier_mad, "expected a number of MADs above 0 (3, 3.5)");
    options.outlier_mad = k;
  }
  if (!text.outlier_floor.empty()) {
    options.outlier_floor_pct = parse_percent("--outlier-floor", text.outlier_floor);
    if (options.outlier_floor_pct >= 100)
      throw UsageError("--outlier-floor " + text.outlier_floor, "expected a percentage below 100 (5%, 2.5)");
  }
  if (!text.gpu_below_best.empty()) {
    options.gpu_below_best_pct = parse_percent("--gpu-below-best", text.gpu_below_best);
    if (options.gpu_below_best_pct >= 100)
      throw UsageError("--gpu-below-best " + text.gpu_below_best, "expected a percentage below 100 (10%, 5)");
  }
  return options;
}

FleetRun run_fleet(const std::vector<std::string>& inputs, const FleetOptions& options, const std::string& md,
                   const std::string& html) {
  check_outputs_are_new({{"--md", md}, {"--html", html}});
  const FleetInput fleet = load_fleet(inputs, options.all_runs);
  const FleetVerdict verdict = judge_fleet(fleet, options);
  FleetRun run{render_fleet_markdown(fleet, verdict), verdict.failed_nodes > 0};
  if (!html.empty()) write_file_atomic(html, render_fleet_html(fleet, verdict), true);
  if (!md.empty()) write_file_atomic(md, run.markdown, true);
  return run;
}

}  // namespace nodeaudit::report
