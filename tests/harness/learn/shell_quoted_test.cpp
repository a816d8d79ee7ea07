// The command lines learn prints for the user to run again (its summary, --vary's reproduce lines):
// read back by a real POSIX shell, they must give the same words, quotes and spaces included.
#include <gtest/gtest.h>

#include <sstream>

#include "harness/learn/learn_session.hpp"
#include "tests/support/cli_process.hpp"

namespace nodeaudit::learn {
namespace {

TEST(ShellQuoted, AShellReadsTheLineBackAsTheSameWords) {
  const std::vector<std::string> words{"python", "it's mine", "two  spaces", "plain", "{\"num_workers\":1}", "$HOME", "a;b", "*"};
  const std::string line = shell_quoted(words);
  const auto r = proc::run_process({"/bin/sh", "-c", "printf '%s\\n' " + line});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::vector<std::string> back;
  for (std::string w; std::getline(lines, w);) back.push_back(w);
  EXPECT_EQ(back, words) << line;
  EXPECT_EQ(shell_quoted({"plain", "words"}), "plain words");
}

}  // namespace
}  // namespace nodeaudit::learn
