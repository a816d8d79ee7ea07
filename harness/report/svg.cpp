#include "harness/report/svg.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "harness/core/table.hpp"
#include "harness/core/units.hpp"
#include "harness/report/text_escape.hpp"

namespace nodeaudit::report {

namespace {

constexpr double width = 680, height = 320;
constexpr double left = 70, right = 20, top = 40, bottom = 50;
constexpr double plot_w = width - left - right, plot_h = height - top - bottom;
constexpr const char* palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};

const char* colour(std::size_t series) { return palette[series % std::size(palette)]; }

std::string open_svg(const std::string& id, const std::string& title) {
  return fmt::format("<svg class=\"chart\" id=\"{}\" role=\"img\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\">\n"
                     "<title>{}</title>\n",
                     xml_escape(id), width, height, width, height, xml_escape(title));
}

// Horizontal grid lines and labels for 0..axis_max, and the unit.
std::string y_axis(double axis_max, const std::string& unit) {
  std::string out;
  for (int i = 0; i <= 5; ++i) {
    const double value = axis_max * i / 5, y = top + plot_h - plot_h * i / 5;
    out += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>"
                       "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" font-size=\"11\">{}</text>\n",
                       left, y, left + plot_w, y, left - 6, y + 4, xml_escape(format_figure(value)));
  }
  return out + fmt::format("<text x=\"14\" y=\"{}\" font-size=\"12\" transform=\"rotate(-90 14 {})\" text-anchor=\"middle\">{}</text>\n",
                           top + plot_h / 2, top + plot_h / 2, xml_escape(unit));
}

std::string legend(const std::vector<std::string>& series) {
  std::string out;
  double x = left;
  for (std::size_t i = 0; i < series.size(); ++i) {
    out += fmt::format("<rect x=\"{:.1f}\" y=\"14\" width=\"12\" height=\"12\" fill=\"{}\"/>"
                       "<text x=\"{:.1f}\" y=\"24\" font-size=\"12\">{}</text>\n",
                       x, colour(i), x + 16, xml_escape(series[i]));
    x += 28 + 7.0 * static_cast<double>(series[i].size());
  }
  return out;
}

}  // namespace

double nice_axis_max(double value) {
  if (!(value > 0) || !std::isfinite(value)) return 1;
  const double magnitude = std::pow(10, std::floor(std::log10(value)));
  for (const double step : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (step * magnitude >= value) return step * magnitude;
  return 10 * magnitude;
}

std::string render_bar_chart(const BarChart& chart) {
  double largest = 0;
  for (const auto& group : chart.values)
    for (const auto& v : group) largest = std::max(largest, v.value_or(0));
  const double axis_max = nice_axis_max(largest);
  std::string out = open_svg(chart.id, chart.title) + y_axis(axis_max, chart.unit) + legend(chart.series);
  const double group_w = plot_w / static_cast<double>(std::max<std::size_t>(1, chart.categories.size()));
  const double bar_w = group_w * 0.8 / static_cast<double>(std::max<std::size_t>(1, chart.series.size()));
  for (std::size_t c = 0; c < chart.categories.size(); ++c) {
    const double group_x = left + group_w * static_cast<double>(c) + group_w * 0.1;
    for (std::size_t s = 0; s < chart.values[c].size(); ++s) {
      const double x = group_x + bar_w * static_cast<double>(s);
      if (!chart.values[c][s]) {
        out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"middle\">n/a</text>\n", x + bar_w / 2, top + plot_h - 4);
        continue;
      }
      const double value = *chart.values[c][s], h = plot_h * value / axis_max;
      out += fmt::format("<rect class=\"bar\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\">"
                         "<title>{}: {} {}</title></rect>\n"
                         "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"middle\">{}</text>\n",
                         x, top + plot_h - h, bar_w * 0.95, h, colour(s), xml_escape(chart.series[s]), xml_escape(format_figure(value)),
                         xml_escape(chart.unit), x + bar_w / 2, top + plot_h - h - 3, xml_escape(format_figure(value)));
    }
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">{}</text>\n", group_x + group_w * 0.4,
                       top + plot_h + 18, xml_escape(chart.categories[c]));
  }
  return out + "</svg>\n";
}

namespace {

struct LogScale {
  double lo = 0, hi = 1;
  double x(double value) const {
    const double span = hi > lo ? hi - lo : 1;
    return left + plot_w * (std::log2(value) - lo) / span + (hi > lo ? 0 : plot_w / 2);
  }
};

std::string x_ticks(const LineChart& chart, const LogScale& scale, const std::set<double>& xs) {
  std::string out;
  const std::size_t stride = xs.size() > 10 ? (xs.size() + 9) / 10 : 1;
  std::size_t i = 0;
  for (const double x : xs) {
    if (i++ % stride != 0) continue;
    const std::string text = chart.x_is_bytes ? format_bytes(x) : format_figure(x);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n", scale.x(x),
                       top + plot_h + 16, xml_escape(text));
  }
  return out + fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">{} (log scale)</text>\n",
                           left + plot_w / 2, height - 8, xml_escape(chart.x_label));
}

}  // namespace

std::string render_line_chart(const LineChart& chart) {
  std::set<double> xs;
  double largest = 0;
  for (const auto& line : chart.points)
    for (const auto& [x, y] : line)
      if (x > 0) xs.insert(x), largest = std::max(largest, y);
  const double axis_max = nice_axis_max(largest);
  const LogScale scale{xs.empty() ? 0 : std::log2(*xs.begin()), xs.empty() ? 1 : std::log2(*xs.rbegin())};
  std::string out = open_svg(chart.id, chart.title) + y_axis(axis_max, chart.unit) + legend(chart.series) + x_ticks(chart, scale, xs);
  for (std::size_t s = 0; s < chart.points.size(); ++s) {
    std::string polyline, dots;
    for (const auto& [x, y] : chart.points[s]) {
      if (x <= 0) continue;
      const double px = scale.x(x), py = top + plot_h - plot_h * y / axis_max;
      polyline += fmt::format("{:.1f},{:.1f} ", px, py);
      dots += fmt::format("<circle class=\"point\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{}: {} {}</title></circle>\n", px, py,
                          colour(s), xml_escape(chart.series[s]), xml_escape(format_figure(y)), xml_escape(chart.unit));
    }
    if (!polyline.empty())
      out += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n", colour(s), polyline);
    out += dots;
  }
  return out + "</svg>\n";
}

}  // namespace nodeaudit::report
