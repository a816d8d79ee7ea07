#include "harness/core/units.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "harness/core/errors.hpp"

namespace nodeaudit {
namespace {

constexpr const char* size_forms =
    "a byte count (4096) or a number with an IEC unit (KiB, MiB, GiB, TiB) or SI unit (kB, MB, GB, TB)";
constexpr const char* duration_forms = "a number with a unit: ms, s, m or h (500ms, 30s, 5m, 2h)";

// Splits "1.5GiB" into 1.5 and "GiB". Returns false when there is no leading number.
bool split_number(std::string_view text, double& number, std::string_view& suffix) {
  std::size_t end = 0;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) ++end;
  if (end == 0) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + end, number);
  if (ec != std::errc() || ptr != text.data() + end) return false;
  suffix = text.substr(end);
  while (!suffix.empty() && suffix.front() == ' ') suffix.remove_prefix(1);
  return true;
}

double size_multiplier(std::string_view suffix) {
  if (suffix.empty() || suffix == "B") return 1;
  if (suffix == "KiB") return 1024.0;
  if (suffix == "MiB") return 1024.0 * 1024;
  if (suffix == "GiB") return 1024.0 * 1024 * 1024;
  if (suffix == "TiB") return 1024.0 * 1024 * 1024 * 1024;
  if (suffix == "kB" || suffix == "KB") return 1e3;
  if (suffix == "MB") return 1e6;
  if (suffix == "GB") return 1e9;
  if (suffix == "TB") return 1e12;
  return 0;
}

}  // namespace

std::optional<double> parse_finite_number(std::string_view text) {
  const std::string owned(text);
  try {
    std::size_t used = 0;
    const double value = std::stod(owned, &used);
    if (!owned.empty() && used == owned.size() && std::isfinite(value)) return value;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

std::uint64_t parse_size_bytes(std::string_view text) {
  double number = 0;
  std::string_view suffix;
  const std::string shown(text);
  if (!split_number(text, number, suffix)) throw UsageError("size '" + shown + "'", std::string("expected ") + size_forms);
  const double multiplier = size_multiplier(suffix);
  if (multiplier == 0)
    throw UsageError("size '" + shown + "'", "unknown unit '" + std::string(suffix) + "'; expected " + size_forms);
  const double bytes = number * multiplier;
  if (bytes != std::floor(bytes)) throw UsageError("size '" + shown + "'", std::string("is not a whole number of bytes; expected ") + size_forms);
  if (bytes > 9.0e18) throw UsageError("size '" + shown + "'", "is too large");
  return static_cast<std::uint64_t>(bytes);
}

double parse_duration_s(std::string_view text) {
  double number = 0;
  std::string_view suffix;
  const std::string shown(text);
  if (!split_number(text, number, suffix))
    throw UsageError("duration '" + shown + "'", std::string("expected ") + duration_forms);
  if (suffix == "ms") return number / 1000.0;
  if (suffix == "s") return number;
  if (suffix == "m" || suffix == "min") return number * 60.0;
  if (suffix == "h") return number * 3600.0;
  throw UsageError("duration '" + shown + "'",
                   (suffix.empty() ? std::string("has no unit") : "unknown unit '" + std::string(suffix) + "'") +
                       "; expected " + duration_forms);
}

std::string format_bytes(double bytes) {
  static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  if (!std::isfinite(bytes)) return "not a finite size";
  int index = 0;
  double value = bytes;
  while (index < 4 && std::fabs(value) >= 1024.0) {
    value /= 1024.0;
    ++index;
  }
  if (std::fabs(value) >= 1e15) return fmt::format("{:.3g} {}", value, units[index]);
  if (value == std::floor(value)) return fmt::format("{} {}", static_cast<long long>(value), units[index]);
  return fmt::format("{:.1f} {}", value, units[index]);
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds)) return "not a finite time";
  if (seconds >= 1e15) return fmt::format("{:.3g} h", seconds / 3600.0);
  // Under 10 ms, three significant digits: a 0.2 ms step is not "0 ms".
  if (seconds < 0.01) return fmt::format("{:.3g} ms", seconds * 1000.0);
  if (seconds < 1.0) return fmt::format("{:.0f} ms", seconds * 1000.0);
  if (seconds < 60.0) return fmt::format("{:.1f} s", seconds);
  const auto whole = static_cast<long long>(seconds);
  if (seconds < 3600.0) return fmt::format("{} m {} s", whole / 60, whole % 60);
  return fmt::format("{} h {} m", whole / 3600, (whole % 3600) / 60);
}

namespace {

// 1234567 -> "1,234,567".
std::string with_separators(const std::string& digits) {
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// `magnitude` (> 0) rounded to three significant figures, as plain decimal text.
std::string three_figures(double magnitude) {
  const int exponent = static_cast<int>(std::floor(std::log10(magnitude)));
  const double scale = std::pow(10.0, exponent - 2);
  const double rounded = std::round(magnitude / scale) * scale;  // 3 significant figures, e.g. 12345 -> 12300
  // Rounding can reach the next power of ten (99.96 -> 100): the decimals follow the rounded value.
  const int decimals = std::max(0, 2 - static_cast<int>(std::floor(std::log10(rounded * (1 + 1e-12)))));
  if (decimals > 0) return fmt::format("{:.{}f}", rounded, decimals);
  return with_separators(fmt::format("{:.0f}", rounded));
}

struct Scale {
  double factor;       // in multiples of the figure's own unit
  const char* unit;    // "ms", "kB", "M"
  const char* suffix;  // "/s" for a rate
};

// The scaled units of `unit`, smallest first, in multiples of `unit` itself (a figure in GB is
// written in the byte scale: 2.621e-04 GB is 262 kB); empty for a unit without a scale.
std::vector<Scale> scales_of(std::string_view unit) {
  static const std::vector<std::pair<const char*, double>> times = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}};
  static const std::vector<std::pair<const char*, double>> bytes = {{"B", 1},     {"kB", 1e3},  {"MB", 1e6},
                                                                     {"GB", 1e9}, {"TB", 1e12}, {"PB", 1e15}};
  // Counts below a million read best whole, with separators (1,640); from a million, M, G and T.
  static const std::vector<std::pair<const char*, double>> counts = {{"", 1}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}};
  std::vector<Scale> out;
  const auto pick = [&](const std::vector<std::pair<const char*, double>>& units, std::string_view name, const char* suffix) {
    for (const auto& [unit_name, factor] : units)
      if (name == unit_name) {
        for (const auto& [other, other_factor] : units) out.push_back({other_factor / factor, other, suffix});
        return true;
      }
    return false;
  };
  if (unit == "bytes") unit = "B";
  if (unit == "count") unit = "";
  if (pick(times, unit, "") || pick(bytes, unit, "") || pick(counts, unit, "")) return out;
  if (unit.size() > 2 && unit.substr(unit.size() - 2) == "/s" && pick(bytes, unit.substr(0, unit.size() - 2), "/s")) return out;
  return {};
}

}  // namespace

std::string format_number(double value) {
  if (std::isnan(value)) return "not a number";
  if (std::isinf(value)) return value > 0 ? "infinite" : "-infinite";
  if (value == 0) return "0";
  // Below a billionth a figure without a unit to scale is rounding left over from arithmetic (a MAD of
  // identical values), not a measurement: written as about zero rather than with fifteen zeros.
  if (std::fabs(value) < 1e-9) return "~0";
  // A whole number under 1,000 is written whole (8 workers, not 8.00): no precision is invented.
  if (std::fabs(value) < 1000 && value == std::round(value)) return fmt::format("{:.0f}", value);
  const std::string text = three_figures(std::fabs(value));
  return (value < 0 ? "-" : "") + text;
}

std::string format_quantity(double value, std::string_view unit) {
  const std::vector<Scale> scales = scales_of(unit);
  if (scales.empty() || value == 0 || !std::isfinite(value)) {
    const std::string shown = unit == "count" ? "" : std::string(unit);
    return format_number(value) + (shown.empty() ? "" : " " + shown);
  }
  // The largest scale the value reaches, judged after rounding (999.7 us is 1.00 ms, not 1,000 us).
  std::size_t pick = 0;
  for (std::size_t i = 0; i < scales.size(); ++i)
    if (std::fabs(value) / scales[i].factor >= 0.9995) pick = i;
  const std::string number = format_number(value / scales[pick].factor);
  const std::string scaled = std::string(scales[pick].unit) + scales[pick].suffix;
  return number + (scaled.empty() ? "" : " " + scaled);
}

}  // namespace nodeaudit
