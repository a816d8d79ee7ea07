// `learn --vary`'s report as one self-contained HTML page: the table of the Markdown report and a
// chart of step time (samples/s for batch_size) per value as inline SVG: a bar at the median, a line
// over the range of the repeats and a dot per repeat. No script, no style sheet or font from
// elsewhere: the page opens offline, and the CSP meta tag forbids any external resource.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/learn/vary_detail.hpp"
#include "harness/report/text_escape.hpp"

namespace nodeaudit::learn {

namespace {

// HTML text: the report library's one escaping (control characters made spaces, as XML wants).
std::string escaped(const std::string& text) { return report::xml_escape(text); }

const std::vector<double>& chart_figures(const VaryReport& r, const VaryValue& v) {
  return r.setting.per_sample_rate() ? v.samples_per_s : v.step_time_s;
}

}  // namespace

std::string vary_step_chart_svg(const VaryReport& r) {
  const bool rate = r.setting.per_sample_rate();
  const double scale = rate ? 1 : 1e3;  // ms on the axis for step time
  double top = 0;
  for (const auto& v : r.values)
    for (double x : chart_figures(r, v)) top = std::max(top, scale * x);
  if (!(top > 0)) top = 1;
  const double plot_h = 200, bar_w = 40, gap = 30, left = 60, base_y = 230;
  const double width = left + r.values.size() * (bar_w + gap) + gap;
  std::string svg = fmt::format(
      "<svg id=\"vary-chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"280\" role=\"img\" "
      "aria-label=\"{} per value of {}\">\n",
      width, rate ? "samples/s" : "step time", escaped(r.setting.name));
  svg += fmt::format("<text x=\"4\" y=\"16\" font-size=\"12\">{} (0 to {:.4g})</text>\n", rate ? "samples/s" : "step time, ms", top);
  svg += fmt::format("<line class=\"axis\" x1=\"{0}\" y1=\"{1}\" x2=\"{2:.0f}\" y2=\"{1}\" stroke=\"#333\"/>\n", left - 10, base_y, width);
  const auto y_of = [&](double x) { return base_y - plot_h * (scale * x) / top; };
  for (std::size_t i = 0; i < r.values.size(); ++i) {
    const VaryValue& v = r.values[i];
    const double x = left + gap / 2 + i * (bar_w + gap);
    const auto& figures = chart_figures(r, v);
    const std::string label = escaped(v.value);
    if (!figures.empty()) {
      const Spread s = spread_of(figures);
      const bool best = r.best && *r.best == v.value;
      svg += fmt::format("<rect class=\"bar\" data-value=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.0f}\" height=\"{:.1f}\" fill=\"{}\">"
                         "<title>{}={}: median {:.4g}</title></rect>\n",
                         label, x, y_of(s.median), bar_w, base_y - y_of(s.median), best ? "#2a7d2a" : "#4a78b0", escaped(r.setting.name),
                         label, scale * s.median);
      svg += fmt::format("<line class=\"range\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#000\" stroke-width=\"2\"/>\n",
                         x + bar_w / 2, y_of(s.min), y_of(s.max));
      for (double f : figures)
        svg += fmt::format("<circle class=\"repeat\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"#000\"/>\n", x + bar_w / 2, y_of(f));
    } else {
      svg += fmt::format("<text class=\"no-run\" x=\"{:.1f}\" y=\"{}\" font-size=\"11\">failed</text>\n", x, base_y - 6);
    }
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">{}</text>\n", x + bar_w / 2, base_y + 16, label);
  }
  svg += fmt::format("<text x=\"{:.0f}\" y=\"270\" font-size=\"12\" text-anchor=\"middle\">{}</text>\n</svg>\n", width / 2,
                     escaped(r.setting.name));
  return svg;
}

std::string render_vary_html(const VaryReport& r, const std::string& command_text) {
  using namespace detail;
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n";
  out += fmt::format("<title>{} varied</title>\n<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}"
                     "td,th{{border:1px solid #bbb;padding:3px 8px;text-align:left}}code{{background:#f3f3f3}}</style></head><body>\n",
                     escaped(r.setting.name));
  out += fmt::format("<h1>{} varied in <code>{}</code></h1>\n<p>{} repeat(s) of each value, each repeat in a random order, after a warm-up run not counted; {}.</p>\n", escaped(r.setting.name),
                     escaped(command_text), r.repeats, escaped(baseline_sentence(r)));
  const bool gpu = any_gpu_figure(r);
  out += fmt::format("<table class=\"vary\"><tr><th>value</th><th>step time (range)</th><th>samples/s (range)</th><th>data wait (range)</th>"
                     "<th>CPU cores (range)</th>{}<th>verdict</th></tr>\n", gpu ? "<th>GPU utilization (range), peak allocated</th>" : "");
  for (const auto& row : vary_rows(r))
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>{}<td>{}</td></tr>\n", escaped(row.value), row.step_time,
                       row.samples_per_s, row.wait, row.cpu, gpu ? "<td>" + row.gpu + "</td>" : "", escaped(row.verdict));
  out += "</table>\n<p>" + escaped(figures_sentence()) + ".</p>\n<p class=\"best\">" + escaped(best_sentence(r)) + "</p>\n" + vary_step_chart_svg(r);
  out += "<h2>Reproduce</h2>\n<ul>\n";
  for (const auto& v : r.values) out += fmt::format("<li>{}={}: <code>{}</code></li>\n", escaped(r.setting.name), escaped(v.value), escaped(v.command));
  out += "</ul>\n";
  if (!r.best_profile_path.empty()) out += "<p>The best value's learned profile: <code>" + escaped(r.best_profile_path) + "</code></p>\n";
  const auto costs = cost_lines(r);
  if (!costs.empty()) out += "<h2>Cost of one run</h2>\n<ul>\n";
  for (const auto& line : costs) out += "<li>" + escaped(line) + "</li>\n";
  if (!costs.empty()) out += "</ul>\n";
  if (!r.advice.empty()) out += "<h2>Optimize or upgrade</h2>\n<p class=\"advice\">" + escaped(r.advice) + "</p>\n";
  return out + "</body></html>\n";
}

}  // namespace nodeaudit::learn
