// Parsing of the small KEY=VALUE and percentage arguments of `compare` and `report`, and the
// output-file rule they share (refuse an existing file before anything is written).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace nodeaudit::report {

// "5%", "5", "2.5%" -> 5, 5, 2.5. Throws UsageError naming the option for anything else or < 0.
double parse_percent(const std::string& option, const std::string& text);
// "a=12.5" -> {"a", "12.5"}; throws UsageError naming the option when there is no '=' or an empty side.
std::pair<std::string, std::string> split_assignment(const std::string& option, const std::string& text);
// A non-negative finite number; throws UsageError naming option and text.
double parse_amount(const std::string& option, const std::string& text);

struct OutputFile {
  std::string option;  // "--md"
  std::string path;    // empty when not asked for
};
// Throws UsageError for the first path that exists or whose directory does not, so a refused
// file never leaves the others half written.
void check_outputs_are_new(const std::vector<OutputFile>& outputs);

}  // namespace nodeaudit::report
