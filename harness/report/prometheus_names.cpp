#include "harness/report/prometheus_names.hpp"

#include <array>
#include <cctype>
#include <regex>
#include <string_view>
#include <vector>

namespace nodeaudit::report {

namespace {

struct UnitRule {
  std::string_view unit;       // as the probe writes it (harness/core/metric.hpp)
  std::string_view suffix;     // appended to the family name
  double scale;                // to the base unit
  std::string_view base_unit;  // for HELP
  std::string_view dropped;    // the unit's own token in metric names ("us" in time_us)
};

constexpr std::array unit_rules{
    UnitRule{"GB/s", "bytes_per_second", 1e9, "bytes per second", "gbps"},
    UnitRule{"TFLOP/s", "flops_per_second", 1e12, "floating-point operations per second", "tflops"},
    UnitRule{"IOPS", "operations_per_second", 1, "I/O operations per second", "iops"},
    UnitRule{"us", "seconds", 1e-6, "seconds", "us"},
    UnitRule{"s", "seconds", 1, "seconds", "s"},
    UnitRule{"bytes", "bytes", 1, "bytes", "bytes"},
    UnitRule{"%", "ratio", 0.01, "ratio (0..1)", "pct"},
    UnitRule{"images/s", "images_per_second", 1, "images per second", ""},
    UnitRule{"samples/s", "samples_per_second", 1, "samples per second", ""},
    UnitRule{"s/GB", "seconds_per_byte", 1e-9, "seconds per byte", ""},
    UnitRule{"count", "", 1, "", ""},
};

// Names whose generic form would read badly ("pct_of_peak" -> "of_peak_ratio") or that spell a unit
// in a way the generic rule does not drop. Keyed by name and unit: the same name in another unit
// is renamed generically, so a scale is never applied to the wrong unit.
struct Rename {
  std::string_view metric, unit, tail;
};
constexpr std::array renames{
    Rename{"pct_of_peak", "%", "peak_ratio"},
    Rename{"h2d_pct_of_link", "%", "h2d_link_ratio"},
    Rename{"d2h_pct_of_link", "%", "d2h_link_ratio"},
    Rename{"au", "%", "accelerator_utilization_ratio"},
    Rename{"au_with_checkpoint", "%", "accelerator_utilization_with_checkpoint_ratio"},
    Rename{"images_per_s", "images/s", "images_per_second"},
    Rename{"images_per_s_per_core", "images/s", "images_per_second_per_core"},
    Rename{"images_per_s_per_gpu", "images/s", "images_per_second_per_gpu"},
    Rename{"samples_per_s", "samples/s", "samples_per_second"},
    Rename{"samples_per_s_best", "samples/s", "samples_per_second_best"},
    Rename{"samples_per_s_per_worker", "samples/s", "samples_per_second_per_worker"},
    Rename{"samples_per_s_per_gpu", "samples/s", "samples_per_second_per_gpu"},
    Rename{"cpu_per_gb", "s/GB", "cpu_seconds_per_byte"},
    Rename{"pingpong_bw", "GB/s", "pingpong_bandwidth_bytes_per_second"},
    Rename{"allreduce_bw", "GB/s", "allreduce_bandwidth_bytes_per_second"},
};

std::string sanitize(const std::string& text) {
  std::string out;
  for (const char c : text) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

std::vector<std::string> tokens_of(const std::string& name) {
  std::vector<std::string> tokens;
  std::string token;
  for (const char c : name + "_") {
    if (c != '_') {
      token += c;
    } else if (!token.empty()) {
      tokens.push_back(token);
      token.clear();
    }
  }
  return tokens;
}

std::string joined(const std::vector<std::string>& tokens) {
  std::string out;
  for (const auto& token : tokens) out += (out.empty() ? "" : "_") + token;
  return out;
}

// "latency_p99" -> "0.99", "latency_p5" -> "0.05", "latency_max" -> "1": the last token of a time metric.
std::optional<std::string> quantile_of(const std::string& token) {
  static const std::regex percentile(R"(p([0-9]{1,3}))");
  std::smatch m;
  if (token == "max") return "1";
  if (!std::regex_match(token, m, percentile) || m[1].str() == "100") return std::nullopt;
  std::string digits = m[1].str().size() == 1 ? "0" + m[1].str() : m[1].str();  // p5 -> "05"
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  return "0." + digits;
}

// "gpu_memory_bandwidth" + "bandwidth_bytes_per_second": the repeated word is said once.
std::string family_name(const std::string& probe, const std::string& tail) {
  const std::string prefix = "nodeaudit_" + sanitize(probe);
  const std::vector<std::string> probe_tokens = tokens_of(prefix);
  std::vector<std::string> tail_tokens = tokens_of(tail);
  if (tail_tokens.size() > 1 && tail_tokens.front() == probe_tokens.back()) tail_tokens.erase(tail_tokens.begin());
  return joined(probe_tokens) + (tail_tokens.empty() ? "" : "_" + joined(tail_tokens));
}

}  // namespace

PrometheusSeries prometheus_series(const std::string& probe, const std::string& metric, const std::string& unit) {
  const UnitRule* rule = nullptr;
  for (const UnitRule& candidate : unit_rules)
    if (candidate.unit == unit) rule = &candidate;
  if (!rule) return {family_name(probe, sanitize(metric)), 1, "", std::nullopt};
  PrometheusSeries series{"", rule->scale, std::string(rule->base_unit), std::nullopt};
  for (const Rename& rename : renames)
    if (rename.metric == metric && rename.unit == unit) {
      series.family = family_name(probe, std::string(rename.tail));
      return series;
    }
  std::vector<std::string> tokens;
  for (const std::string& token : tokens_of(sanitize(metric)))
    if (token != rule->dropped) tokens.push_back(token);
  if (rule->suffix == "seconds" && tokens.size() > 1)
    if ((series.quantile = quantile_of(tokens.back()))) tokens.pop_back();
  if (!rule->suffix.empty()) tokens.emplace_back(rule->suffix);
  series.family = family_name(probe, joined(tokens));
  return series;
}

}  // namespace nodeaudit::report
