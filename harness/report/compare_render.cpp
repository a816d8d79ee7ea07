#include "harness/report/compare_render.hpp"

#include <algorithm>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "harness/core/table.hpp"
#include "harness/report/text_escape.hpp"

namespace nodeaudit::report {

namespace {

std::string figure_with_interval(const MetricRecord& record) {
  return fmt::format("{} [{}, {}]", format_figure(record.median), format_figure(record.ci_lo), format_figure(record.ci_hi));
}

// With several runs, their mean (the centre the change is measured from) and range (the between-run
// noise); with one, the median and its interval.
std::string figure_of_side(const MetricRecord& record, const std::vector<double>& runs, double centre) {
  if (runs.size() < 2) return figure_with_interval(record);
  const auto [lo, hi] = std::minmax_element(runs.begin(), runs.end());
  return fmt::format("{} ({} runs: {} .. {})", format_figure(centre), runs.size(), format_figure(*lo), format_figure(*hi));
}

std::string noise_text(const MetricChange& m) {
  if (m.verdict == Verdict::incomparable) return "";
  if (!m.band.measured) return "not measured";
  return fmt::format("{:.1f}% (band {:.1f}%)", m.band.spread_pct, m.band.band_pct);
}

bool is_changed(const MetricChange& m) { return m.verdict == Verdict::regression || m.verdict == Verdict::improvement; }

std::string delta_text(const MetricChange& change) {
  return change.delta_pct ? fmt::format("{:+.1f}%", *change.delta_pct) : "from 0";
}

std::string summary_line(const Comparison& c) {
  const std::size_t one_side = c.only_in_baseline.size() + c.only_in_candidate.size();
  return fmt::format("**{}**: {} regressed, {} improved, {} unchanged, {} inconclusive, {} not judged (disturbed), "
                     "{} incomparable; {} in one file only; {} environment differences; {} probe status changes.",
                     c.has_regression() ? "REGRESSION" : "NO REGRESSION", c.count(Verdict::regression),
                     c.count(Verdict::improvement), c.count(Verdict::unchanged), c.count(Verdict::inconclusive),
                     c.count(Verdict::disturbed), c.count(Verdict::incomparable), one_side, c.env.size(), c.probes.size());
}

std::string env_section(const Comparison& c) {
  std::string out = "## Environment differences\n\n";
  if (c.env.empty()) return out + "None: driver, CUDA, NCCL, kernel, GPUs and host match.\n\n";
  out += "| field | baseline | candidate |\n|---|---|---|\n";
  for (const auto& d : c.env)
    out += fmt::format("| {} | {} | {} |\n", markdown_cell(d.field), markdown_cell(d.baseline), markdown_cell(d.candidate));
  return out + "\n";
}

std::string between_baselines_section(const Comparison& c) {
  if (c.between_baselines.empty()) return "";
  std::string out = "## Differences between the baselines\n\nThe baselines are not runs of one unchanged node; "
                    "their spread includes these differences.\n\n| field | first baseline | that baseline |\n|---|---|---|\n";
  for (const auto& d : c.between_baselines)
    out += fmt::format("| {} | {} | {} |\n", markdown_cell(d.field), markdown_cell(d.baseline), markdown_cell(d.candidate));
  return out + "\n";
}

std::string probe_section(const Comparison& c) {
  if (c.probes.empty()) return "";
  std::string out = "## Probe status changes\n\n| probe | baseline | candidate | reason |\n|---|---|---|---|\n";
  for (const auto& p : c.probes)
    out += fmt::format("| {} | {} | {} | {} |\n", markdown_cell(p.probe), p.baseline, p.candidate, markdown_cell(p.candidate_reason));
  return out + "\n";
}

std::string metric_rows(const Comparison& c, const std::function<bool(const MetricChange&)>& wanted) {
  std::string out;
  for (const auto& m : c.metrics) {
    if (!wanted(m)) continue;
    std::string why = m.why;
    if (!m.missing_from.empty()) {
      why += "; not in baseline";
      for (std::size_t i = 0; i < m.missing_from.size(); ++i) why += (i ? ", " : " ") + m.missing_from[i];
      why += " (probe or params differ)";
    }
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", markdown_cell(display_name(m.baseline)),
                       markdown_cell(m.baseline.unit), figure_of_side(m.baseline, m.baseline_runs, m.baseline_value),
                       figure_of_side(m.candidate, m.candidate_runs, m.candidate_value), delta_text(m), noise_text(m),
                       verdict_text(m), markdown_cell(why));
  }
  return out;
}

std::string metrics_section(const std::string& title, const std::string& note, const std::string& rows) {
  if (rows.empty()) return "";
  return "## " + title + "\n\n" + (note.empty() ? "" : note + "\n\n") +
         "| metric | unit | baseline median [95% CI] or mean (runs: range) | candidate | change | run-to-run spread | verdict | why |\n"
         "|---|---|---|---|---|---|---|---|\n" +
         rows + "\n";
}

// When neither side has rounds: say the between-run noise of this node is not measured, and how such
// figures were judged.
std::string unmeasured_section(const Comparison& c) {
  int figures = 0;
  for (const auto& m : c.metrics) figures += !m.band.measured && m.verdict != Verdict::incomparable ? 1 : 0;
  if (figures == 0) return "";
  return fmt::format("## Noise not measured on this node\n\nFor {} figure{} neither side has rounds or several "
                     "baselines, so this node's spread between runs is not known. Such a figure is called only beyond "
                     "the tolerance with the within-run 95% intervals of the two medians apart; to measure the noise, "
                     "compare several results a side, or this node's earlier results with `--history DIR`.\n\n",
                     figures, figures == 1 ? "" : "s");
}

std::string one_side_section(const std::string& title, const std::vector<MetricRecord>& records) {
  if (records.empty()) return "";
  std::string out = "## " + title + "\n\n";
  for (const auto& r : records)
    out += fmt::format("- {} ({}): {}\n", markdown_cell(display_name(r)), r.unit, format_figure(r.median));
  return out + "\n";
}

}  // namespace

std::string render_compare_markdown(const Comparison& c) {
  std::string out = "# nodeaudit compare\n\n";
  out += fmt::format("Baseline `{}`, candidate `{}`. Default tolerance {:g}%; a change counts only beyond the "
                     "tolerance and beyond the noise band measured on this node (half the 99% Student-t interval of the "
                     "difference of the two sides' means of their runs, from the pooled scatter of the rounds, repeats and "
                     "several baselines; half as wide again for tail figures such as p99), with the within-run 95% "
                     "intervals of the two medians apart. A figure whose band is wider than the tolerance and does not "
                     "exclude its change is inconclusive; a figure from a disturbed run is not judged. Neither fails "
                     "the gate.\n\n",
                     c.baseline_label, c.candidate_label, c.tolerance_pct);
  out += summary_line(c) + "\n\n";
  out += env_section(c) + between_baselines_section(c) + probe_section(c);
  out += metrics_section("Changed beyond noise", "", metric_rows(c, is_changed));
  out += metrics_section("Inconclusive", "The noise band of these figures is wider than the tolerance and does not exclude their change.",
                         metric_rows(c, [](const MetricChange& m) { return m.verdict == Verdict::inconclusive; }));
  out += metrics_section("Not judged: disturbed runs", "Other processes used the node while these probes ran.",
                         metric_rows(c, [](const MetricChange& m) { return m.verdict == Verdict::disturbed; }));
  out += metrics_section("Unchanged", "", metric_rows(c, [](const MetricChange& m) {
                           return m.verdict == Verdict::unchanged || m.verdict == Verdict::incomparable;
                         }));
  out += unmeasured_section(c);
  out += one_side_section("Only in the baseline", c.only_in_baseline);
  out += one_side_section("Only in the candidate", c.only_in_candidate);
  return out;
}

namespace {

std::string junit_metric_case(const MetricChange& m) {
  std::string out = fmt::format("    <testcase classname=\"{}\" name=\"{}\">\n", xml_escape(m.baseline.probe),
                                xml_escape(display_name(m.baseline).substr(m.baseline.probe.size() + 1)));
  const std::string detail = fmt::format("baseline {} {}, candidate {} {}: {}", figure_with_interval(m.baseline),
                                         m.baseline.unit, figure_with_interval(m.candidate), m.candidate.unit, m.why);
  if (m.verdict == Verdict::regression)
    out += fmt::format("      <failure type=\"regression\" message=\"{}\">{}</failure>\n", xml_escape(delta_text(m) + " regression"),
                       xml_escape(detail));
  else if (m.verdict == Verdict::inconclusive || m.verdict == Verdict::disturbed)
    out += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(to_string(m.verdict) + ": " + m.why));
  else
    out += fmt::format("      <system-out>{}: {}</system-out>\n", to_string(m.verdict), xml_escape(detail));
  return out + "    </testcase>\n";
}

std::string junit_one_side_case(const MetricRecord& r, const std::string& where) {
  return fmt::format("    <testcase classname=\"{}\" name=\"{}\">\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                     xml_escape(r.probe), xml_escape(display_name(r).substr(r.probe.size() + 1)), xml_escape("only in the " + where));
}

}  // namespace

std::string render_compare_junit(const Comparison& c) {
  std::string cases;
  int failures = 0, skipped = 0, tests = 0;
  for (const auto& p : c.probes) {
    const bool failed = p.baseline == "ok" && p.candidate != "ok";
    cases += fmt::format("    <testcase classname=\"{}\" name=\"status\">\n", xml_escape(p.probe));
    if (failed)
      cases += fmt::format("      <failure type=\"status\" message=\"{}\"/>\n",
                           xml_escape(fmt::format("was {}, now {}: {}", p.baseline, p.candidate, p.candidate_reason)));
    cases += "    </testcase>\n";
    failures += failed ? 1 : 0;
    ++tests;
  }
  for (const auto& m : c.metrics) {
    cases += junit_metric_case(m);
    failures += m.verdict == Verdict::regression ? 1 : 0;
    skipped += m.verdict == Verdict::inconclusive || m.verdict == Verdict::disturbed ? 1 : 0;
    ++tests;
  }
  for (const auto& r : c.only_in_baseline) cases += junit_one_side_case(r, "baseline"), ++skipped, ++tests;
  for (const auto& r : c.only_in_candidate) cases += junit_one_side_case(r, "candidate"), ++skipped, ++tests;
  std::string properties;
  for (const auto& d : c.env)
    properties += fmt::format("      <property name=\"env.{}\" value=\"{}\"/>\n", xml_escape(d.field),
                              xml_escape(d.baseline + " -> " + d.candidate));
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"nodeaudit compare\" tests=\"{0}\" failures=\"{1}\">\n"
      "  <testsuite name=\"nodeaudit compare {2} vs {3}\" tests=\"{0}\" failures=\"{1}\" errors=\"0\" skipped=\"{4}\">\n"
      "{5}{6}  </testsuite>\n</testsuites>\n",
      tests, failures, xml_escape(c.baseline_label), xml_escape(c.candidate_label), skipped,
      properties.empty() ? "" : "    <properties>\n" + properties + "    </properties>\n", cases);
}

}  // namespace nodeaudit::report
