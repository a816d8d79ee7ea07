#include "harness/report/cli_args.hpp"

#include <cmath>
#include <filesystem>

#include "harness/core/output_place.hpp"
#include "harness/core/errors.hpp"
#include "harness/core/units.hpp"

namespace nodeaudit::report {

double parse_amount(const std::string& option, const std::string& text) {
  const std::optional<double> value = parse_finite_number(text);
  if (!value || *value < 0) throw UsageError(option + " " + text, "expected a non-negative number (12, 12.5)");
  return *value;
}

double parse_percent(const std::string& option, const std::string& text) {
  const std::string number = !text.empty() && text.back() == '%' ? text.substr(0, text.size() - 1) : text;
  try {
    return parse_amount(option, number);
  } catch (const UsageError&) {
    throw UsageError(option + " " + text, "expected a non-negative percentage (5%, 2.5%, 10)");
  }
}

std::pair<std::string, std::string> split_assignment(const std::string& option, const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw UsageError(option + " " + text, "expected KEY=VALUE (e.g. " + option + " vendor-a=12.5)");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

void check_outputs_are_new(const std::vector<OutputFile>& outputs) {
  for (const auto& output : outputs)
    if (!output.path.empty()) check_output_place(output.option, output.path);
}

}  // namespace nodeaudit::report
