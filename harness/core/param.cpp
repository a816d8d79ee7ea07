#include "harness/core/param.hpp"

#include <charconv>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/core/errors.hpp"
#include "harness/core/units.hpp"

namespace nodeaudit {
namespace {

bool is_power_of_two(double v) {
  if (v < 1 || v != std::floor(v)) return false;
  const auto u = static_cast<std::uint64_t>(v);
  return (u & (u - 1)) == 0;
}

std::string bound_text(const ParamSpec& spec, double v) {
  if (spec.type == ParamType::size) return format_bytes(v);
  if (spec.type == ParamType::duration) return format_duration(v);
  if (v == std::floor(v)) return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{}", v);
}

[[noreturn]] void reject(const ParamSpec& spec, const std::string& text, const std::string& why) {
  throw UsageError("--" + spec.name + " " + text, why);
}

void check_bounds(const ParamSpec& spec, const std::string& text, double v) {
  const bool below = spec.min && v < *spec.min;
  const bool above = spec.max && v > *spec.max;
  const bool not_multiple = spec.multiple_of && std::fmod(v, static_cast<double>(*spec.multiple_of)) != 0;
  if (below || above || not_multiple || (spec.power_of_two && !is_power_of_two(v)))
    reject(spec, text, "must be " + describe_accepted(spec));
}

std::int64_t parse_integer(const ParamSpec& spec, const std::string& text) {
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty())
    reject(spec, text, "must be a whole number: " + describe_accepted(spec));
  return v;
}

double parse_real(const ParamSpec& spec, const std::string& text) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  reject(spec, text, "must be a number: " + describe_accepted(spec));
}

std::vector<std::int64_t> parse_list(const ParamSpec& spec, const std::string& text) {
  std::vector<std::int64_t> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::int64_t v = parse_integer(spec, item);
    check_bounds(spec, text, static_cast<double>(v));
    out.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

std::string describe_accepted(const ParamSpec& spec) {
  std::string range;
  if (spec.min && spec.max) range = fmt::format(" between {} and {}", bound_text(spec, *spec.min), bound_text(spec, *spec.max));
  else if (spec.min) range = fmt::format(" of at least {}", bound_text(spec, *spec.min));
  else if (spec.max) range = fmt::format(" of at most {}", bound_text(spec, *spec.max));
  const std::string pow2 = spec.power_of_two ? "a power of two" : "";
  if (spec.multiple_of) range += fmt::format(" and a multiple of {}", *spec.multiple_of);
  switch (spec.type) {
    case ParamType::integer: return (pow2.empty() ? "an integer" : pow2) + range;
    case ParamType::real: return "a number" + range;
    case ParamType::size: return (pow2.empty() ? "a size" : pow2 + " size") + range + " (4096, 4KiB, 1MiB, 1GB)";
    case ParamType::duration: return "a duration" + range + " (500ms, 30s, 5m, 2h)";
    case ParamType::boolean: return "true or false";
    case ParamType::text: return "text";
    case ParamType::choice: return "one of " + fmt::format("{}", fmt::join(spec.choices, ", "));
    case ParamType::int_list: return "a comma-separated list of integers" + range + " (1,2,4,8)";
  }
  return "a value";
}

ParamValue parse_param(const ParamSpec& spec, const std::string& text) {
  switch (spec.type) {
    case ParamType::integer: {
      const std::int64_t v = parse_integer(spec, text);
      check_bounds(spec, text, static_cast<double>(v));
      return v;
    }
    case ParamType::real: {
      const double v = parse_real(spec, text);
      check_bounds(spec, text, v);
      return v;
    }
    case ParamType::size: {
      std::uint64_t v = 0;
      try {
        v = parse_size_bytes(text);
      } catch (const UsageError&) {
        reject(spec, text, "must be " + describe_accepted(spec));
      }
      check_bounds(spec, text, static_cast<double>(v));
      return static_cast<std::int64_t>(v);
    }
    case ParamType::duration: {
      double v = 0;
      try {
        v = parse_duration_s(text);
      } catch (const UsageError&) {
        reject(spec, text, "must be " + describe_accepted(spec));
      }
      check_bounds(spec, text, v);
      return v;
    }
    case ParamType::boolean:
      if (text == "true" || text == "1" || text == "yes") return true;
      if (text == "false" || text == "0" || text == "no") return false;
      reject(spec, text, "must be true or false");
    case ParamType::text: return text;
    case ParamType::choice:
      for (const auto& c : spec.choices)
        if (c == text) return text;
      reject(spec, text, "must be " + describe_accepted(spec));
    case ParamType::int_list: return parse_list(spec, text);
  }
  reject(spec, text, "unsupported parameter type");
}

const ParamValue& ParamValues::at(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw std::logic_error("probe read undeclared parameter '" + name + "'");
  return it->second;
}

std::int64_t ParamValues::integer(const std::string& name) const { return std::get<std::int64_t>(at(name)); }
double ParamValues::real(const std::string& name) const { return std::get<double>(at(name)); }
std::uint64_t ParamValues::size_bytes(const std::string& name) const {
  return static_cast<std::uint64_t>(std::get<std::int64_t>(at(name)));
}
double ParamValues::duration_s(const std::string& name) const { return std::get<double>(at(name)); }
bool ParamValues::boolean(const std::string& name) const { return std::get<bool>(at(name)); }
const std::string& ParamValues::text(const std::string& name) const { return std::get<std::string>(at(name)); }
const std::vector<std::int64_t>& ParamValues::int_list(const std::string& name) const {
  return std::get<std::vector<std::int64_t>>(at(name));
}
bool ParamValues::given(const std::string& name) const {
  auto it = given_.find(name);
  return it != given_.end() && it->second;
}

void ParamValues::set(const std::string& name, ParamValue value, bool was_given) {
  values_[name] = std::move(value);
  given_[name] = was_given;
}

nlohmann::json ParamValues::to_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, value] : values_) {
    std::visit([&](const auto& v) { out[name] = v; }, value);
  }
  return out;
}

ParamValues resolve_params(const std::vector<ParamSpec>& specs, const std::map<std::string, std::string>& given,
                           Level level) {
  for (const auto& [name, text] : given) {
    bool known = false;
    for (const auto& spec : specs) known = known || spec.name == name;
    if (!known) {
      std::vector<std::string> names;
      for (const auto& spec : specs) names.push_back("--" + spec.name);
      throw UsageError("--" + name, names.empty() ? "this probe takes no parameters"
                                                  : fmt::format("unknown parameter; accepted: {}", fmt::join(names, ", ")));
    }
  }
  ParamValues values;
  for (const auto& spec : specs) {
    auto it = given.find(spec.name);
    const bool was_given = it != given.end();
    values.set(spec.name, parse_param(spec, was_given ? it->second : spec.default_for(level)), was_given);
  }
  return values;
}

}  // namespace nodeaudit
