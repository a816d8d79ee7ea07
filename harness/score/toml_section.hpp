// Reading one TOML table of a profile: typed getters that locate every error as `file:line:column`,
// and a record of the keys asked for, so an unknown key is reported with the list of accepted ones.
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "harness/core/errors.hpp"
#include "harness/core/units.hpp"
#include "harness/score/field_bound.hpp"

namespace nodeaudit::score::detail {


[[noreturn]] inline void fail_at(const std::string& path, const toml::source_position& pos, const std::string& why) {
  throw UsageError(fmt::format("{}:{}:{}", path, pos.line == 0 ? 1 : pos.line, pos.column == 0 ? 1 : pos.column), why);
}

// A TOML document, or a UsageError at the syntax error's line and column.
inline toml::table parse_toml(const std::string& text, const std::string& path) {
  try {
    return toml::parse(text, path);
  } catch (const toml::parse_error& error) {
    fail_at(path, error.source().begin, fmt::format("TOML syntax error: {}", error.description()));
  }
}

inline std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

class Section {
 public:
  Section(const toml::table& table, std::string name, std::string path)
      : table_(table), name_(std::move(name)), path_(std::move(path)) {}

  std::optional<double> number(const std::string& key, Bound bound, double max_value = default_max_value) {
    const toml::node* node = find(key);
    if (!node) return std::nullopt;
    if (!node->is_number()) fail(*node, fmt::format("'{}' in {} must be a number, got {}", key, where(), type(*node)));
    const double value =
        node->is_integer() ? static_cast<double>(node->as_integer()->get()) : node->as_floating_point()->get();
    check_bound(*node, key, value, bound, max_value);
    return value;
  }

  std::optional<int> integer(const std::string& key, int min_value) {
    const toml::node* node = find(key);
    if (!node) return std::nullopt;
    if (!node->is_integer())
      fail(*node, fmt::format("'{}' in {} must be an integer, got {}", key, where(), type(*node)));
    const auto value = node->as_integer()->get();
    if (value < min_value || value > 1'000'000)
      fail(*node,
           fmt::format("'{}' in {} is {}; must be an integer from {} to 1000000", key, where(), value, min_value));
    return static_cast<int>(value);
  }

  // A byte count as a number, or a string such as "110KiB" / "14GB".
  std::optional<double> size(const std::string& key, Bound bound, double max_value = default_max_value) {
    return size_at(find(key), key, bound, max_value);
  }

  std::optional<double> size_at(const toml::node* node, const std::string& key, Bound bound, double max_value = default_max_value) {
    if (!node) return std::nullopt;
    double value = 0;
    if (node->is_string()) {
      const std::string text = node->as_string()->get();
      if (!text.empty() && text.front() == '-')
        fail(*node, fmt::format("'{}' in {} is {}; a size must not be negative", key, where(), text));
      try {
        value = static_cast<double>(parse_size_bytes(text));
      } catch (const UsageError& error) {
        fail(*node, fmt::format("'{}' in {}: {}", key, where(), error.what()));
      }
    } else if (node->is_number()) {
      value = node->is_integer() ? static_cast<double>(node->as_integer()->get()) : node->as_floating_point()->get();
    } else {
      fail(*node, fmt::format("'{}' in {} must be a size (bytes or a string like \"110KiB\"), got {}", key, where(),
                              type(*node)));
    }
    check_bound(*node, key, value, bound, max_value);
    return value;
  }

  // Seconds as a number, or a string such as "30m" / "2h".
  std::optional<double> duration(const std::string& key) {
    const toml::node* node = find(key);
    if (!node) return std::nullopt;
    double value = 0;
    if (node->is_string()) {
      try {
        value = parse_duration_s(node->as_string()->get());
      } catch (const UsageError& error) {
        fail(*node, fmt::format("'{}' in {}: {}", key, where(), error.what()));
      }
    } else if (node->is_number()) {
      value = node->is_integer() ? static_cast<double>(node->as_integer()->get()) : node->as_floating_point()->get();
    } else {
      fail(*node, fmt::format("'{}' in {} must be a duration (seconds or a string like \"30m\"), got {}", key, where(),
                              type(*node)));
    }
    check_bound(*node, key, value, Bound::non_negative, max_duration_s);
    return value;
  }

  std::optional<std::string> text(const std::string& key) {
    const toml::node* node = find(key);
    if (!node) return std::nullopt;
    if (!node->is_string()) fail(*node, fmt::format("'{}' in {} must be a string, got {}", key, where(), type(*node)));
    return node->as_string()->get();
  }

  std::optional<std::string> choice(const std::string& key, const std::vector<std::string>& accepted) {
    auto value = text(key);
    if (value && std::find(accepted.begin(), accepted.end(), *value) == accepted.end())
      fail(*find(key), fmt::format("'{}' in {} is '{}'; accepted: {}", key, where(), *value, join(accepted)));
    return value;
  }

  const toml::array* array(const std::string& key) {
    const toml::node* node = find(key);
    if (node && !node->is_array())
      fail(*node, fmt::format("'{}' in {} must be an array, got {}", key, where(), type(*node)));
    return node ? node->as_array() : nullptr;
  }

  const toml::node* raw(const std::string& key) { return find(key); }
  const toml::table& table() const { return table_; }

  template <typename T>
  T require(std::optional<T> value, const std::string& key) {
    if (!value) fail_at(path_, table_.source().begin, fmt::format("missing required field '{}' in {}", key, where()));
    return *value;
  }

  // Every key of the table must have been asked for.
  void finish() const {
    for (auto&& [key, node] : table_) {
      const std::string name(key.str());
      if (std::find(accepted_.begin(), accepted_.end(), name) == accepted_.end())
        fail_at(path_, key.source().begin,
                fmt::format("unknown key '{}' in {}; accepted: {}", name, where(), join(accepted_)));
    }
  }

  [[noreturn]] void fail(const toml::node& node, const std::string& why) const {
    fail_at(path_, node.source().begin, why);
  }
  [[noreturn]] void fail_here(const std::string& why) const { fail_at(path_, table_.source().begin, why); }
  const std::string& path() const { return path_; }
  std::string where() const { return name_.empty() ? "the top level" : "[" + name_ + "]"; }

 private:
  const toml::node* find(const std::string& key) {
    if (std::find(accepted_.begin(), accepted_.end(), key) == accepted_.end()) accepted_.push_back(key);
    return table_.get(key);
  }

  static std::string type(const toml::node& node) {
    switch (node.type()) {
      case toml::node_type::string: return "a string";
      case toml::node_type::integer: return "an integer";
      case toml::node_type::floating_point: return "a float";
      case toml::node_type::boolean: return "a boolean";
      case toml::node_type::table: return "a table";
      case toml::node_type::array: return "an array";
      default: return "a date/time";
    }
  }

  // A year: longer than any run or checkpoint interval a profile describes.
  static constexpr double max_duration_s = 365.0 * 24 * 3600;

  void check_bound(const toml::node& node, const std::string& key, double value, Bound bound, double max_value) const {
    const std::string shown = fmt::format("'{}' in {} is {}", key, where(), value);
    if (!std::isfinite(value)) fail(node, shown + "; must be a finite number");
    if (bound != Bound::any && value < 0) fail(node, shown + "; must not be negative");
    if (bound == Bound::positive && value <= 0) fail(node, shown + "; must be greater than 0");
    if (bound == Bound::fraction && (value < 0 || value > 1)) fail(node, shown + "; must be a fraction from 0 to 1");
    if (bound != Bound::fraction && std::abs(value) > max_value)
      fail(node, fmt::format("{}; accepted: {} to {:g}", shown, bound == Bound::positive ? "above 0" : bound == Bound::any ? fmt::format("{:g}", -max_value) : "0", max_value));
  }

  const toml::table& table_;
  std::string name_;
  std::string path_;
  std::vector<std::string> accepted_;
};

}  // namespace nodeaudit::score::detail
