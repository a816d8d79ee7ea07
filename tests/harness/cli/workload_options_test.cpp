// --profile, --target-gpus and --expect are declared once: `run`, `score` and `report` describe each
// the same way in their --help.
#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "tests/support/cli_expect.hpp"

namespace nodeaudit::proc {
namespace {

bool is_value_word(const std::string& word) {  // CLI11's TEXT, REQUIRED, ... after an option's name
  for (const char c : word)
    if (!std::isupper(static_cast<unsigned char>(c))) return false;
  return !word.empty();
}

// The description --help gives `option`, its lines joined, or "" when the option is not there.
std::string help_of(const std::string& help, const std::string& option) {
  std::istringstream lines(help);
  std::string line, text;
  bool inside = false;
  while (std::getline(lines, line)) {
    const auto first = line.find_first_not_of(' ');
    const bool starts_option = first != std::string::npos && line[first] == '-';
    if (starts_option) inside = line.compare(first, option.size() + 1, option + " ") == 0;
    if (inside) text += " " + (starts_option ? line.substr(first + option.size()) : line);
  }
  std::istringstream words(text);
  std::string word, description;
  bool past_value_words = false;
  while (words >> word) {
    past_value_words = past_value_words || !is_value_word(word);
    if (past_value_words) description += (description.empty() ? "" : " ") + word;
  }
  return description;
}

TEST(WorkloadOptions, RunScoreAndReportDescribeEachTheSameWay) {
  std::map<std::string, std::set<std::string>> descriptions;
  for (const std::string command : {"run", "score", "report"}) {
    const ProcessResult r = run_nodeaudit({command, "--help"});
    ASSERT_EQ(r.exit_code, 0) << command << ": " << r.err;
    for (const std::string option : {"--profile", "--target-gpus", "--expect"}) {
      const std::string description = help_of(r.out, option);
      EXPECT_FALSE(description.empty()) << command << " --help has no " << option << ":\n" << r.out;
      descriptions[option].insert(description);
    }
  }
  for (const auto& [option, texts] : descriptions)
    EXPECT_EQ(texts.size(), 1u) << option << " is described " << texts.size()
                                << " ways: " << ::testing::PrintToString(texts);
  EXPECT_NE(descriptions["--target-gpus"].begin()->find("needs --profile"), std::string::npos);
  EXPECT_NE(descriptions["--expect"].begin()->find("needs --profile"), std::string::npos);
}

}  // namespace
}  // namespace nodeaudit::proc
