// Probe parameters, declared once. One ParamSpec drives the CLI option (`--block-size`), its help
// text, the validation message for a bad value, and the `params` block of the result.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "harness/core/level.hpp"

namespace nodeaudit {

enum class ParamType {
  integer,   // 16
  real,      // 0.5
  size,      // 4096, 4KiB, 1GB  -> bytes
  duration,  // 500ms, 30s, 5m   -> seconds
  boolean,   // true|false
  text,      // free text or a path
  choice,    // one of `choices`
  int_list,  // 1,2,4,8
};

struct ParamSpec {
  std::string name;  // CLI spelling without dashes: "block-size"
  ParamType type = ParamType::text;
  // Default as the user would type it, per level (quick, standard, soak). Use `same_at_all_levels`.
  std::array<std::string, 3> default_by_level;
  std::string help;
  // Inclusive bounds for integer, real, size and duration (in bytes / seconds); for int_list each element.
  std::optional<double> min, max;
  std::vector<std::string> choices;  // for ParamType::choice
  bool power_of_two = false;         // integer/size values must be powers of two
  std::optional<std::int64_t> multiple_of;  // integer/size values must be multiples of this

  const std::string& default_for(Level level) const { return default_by_level[static_cast<int>(level)]; }
};

inline std::array<std::string, 3> same_at_all_levels(const std::string& value) { return {value, value, value}; }

using ParamValue = std::variant<std::int64_t, double, bool, std::string, std::vector<std::int64_t>>;

// Parsed, validated values for one probe invocation.
class ParamValues {
 public:
  std::int64_t integer(const std::string& name) const;
  double real(const std::string& name) const;
  std::uint64_t size_bytes(const std::string& name) const;
  double duration_s(const std::string& name) const;
  bool boolean(const std::string& name) const;
  const std::string& text(const std::string& name) const;  // text and choice
  const std::vector<std::int64_t>& int_list(const std::string& name) const;
  // True when the user gave the value (not the default); storage probes distinguish an explicit
  // `--direct true` (error if unsupported) from the default (fall back with a warning).
  bool given(const std::string& name) const;

  void set(const std::string& name, ParamValue value, bool given);
  nlohmann::json to_json() const;

 private:
  const ParamValue& at(const std::string& name) const;
  std::map<std::string, ParamValue> values_;
  std::map<std::string, bool> given_;
};

// Parses one value; throws UsageError "--NAME VALUE: <rule>" when it is not acceptable.
ParamValue parse_param(const ParamSpec& spec, const std::string& text);

// Builds the values for `specs` from user-given texts (name -> text) plus level defaults.
// Throws UsageError for an unknown name or a bad value.
ParamValues resolve_params(const std::vector<ParamSpec>& specs, const std::map<std::string, std::string>& given,
                           Level level);

// One line describing what is accepted, used in --help and error messages.
std::string describe_accepted(const ParamSpec& spec);

}  // namespace nodeaudit
