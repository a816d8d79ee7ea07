#include "harness/report/cli_args.hpp"

#include <cmath>
#include <filesystem>

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
  namespace fs = std::filesystem;
  for (const auto& output : outputs) {
    if (output.path.empty()) continue;
    std::error_code ec;
    if (fs::exists(output.path, ec))
      throw UsageError(output.option + " " + output.path, "exists; nodeaudit never overwrites a file (choose a new name)");
    const fs::path parent = fs::path(output.path).parent_path();
    if (!parent.empty() && !fs::is_directory(parent, ec))
      throw UsageError(output.option + " " + output.path, "its directory " + parent.string() + " does not exist");
  }
}

}  // namespace nodeaudit::report
