// Shared by the CLI tests: the nodeaudit binary run as a child process, its JSON output, and the
// check that bad input exits 2 with one line "nodeaudit: ..." naming the bad value.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/cli_process.hpp"

namespace nodeaudit::proc {

inline ProcessResult run_nodeaudit(std::vector<std::string> args, const ChildSetup& setup = {}) {
  args.insert(args.begin(), NODEAUDIT_BINARY);
  return run_process(args, setup);
}

// "probe storage.read --size 1MiB" -> its words. Words are split on spaces; '...' or "..." keeps
// spaces in one word, as a shell would. Anything else a shell would interpret (variables,
// redirections, pipes, `;`) is a mistake in the test: it fails naming the line, and runs nothing.
inline std::vector<std::string> split_words(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (const char c : line) {
    if (quote) {
      if (c == quote)
        quote = 0;
      else
        word += c;
    } else if (c == '\'' || c == '"') {
      quote = c, in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(word), word.clear(), in_word = false;
    } else if (std::string_view("$`;|&<>\\").find(c) != std::string_view::npos) {
      ADD_FAILURE() << "shell syntax in a command line run without a shell: " << line;
      return {};
    } else {
      word += c, in_word = true;
    }
  }
  if (quote) ADD_FAILURE() << "unclosed quote in: " << line;
  if (in_word) words.push_back(word);
  return words;
}

// The CLI with `args` written as one line (see split_words).
inline ProcessResult run_nodeaudit_line(const std::string& args, const ChildSetup& setup = {}) {
  const std::vector<std::string> words = split_words(args);
  if (words.empty() && !args.empty()) return {};
  return run_nodeaudit(words, setup);
}

// As above with stderr and stdout as one stream in `out`, in the order written (a terminal's view).
inline ProcessResult run_nodeaudit_merged(const std::string& args, ChildSetup setup = {}) {
  setup.stderr_into_stdout = true;
  return run_nodeaudit_line(args, setup);
}

inline void expect_one_line_usage_error(const ProcessResult& r, const std::string& needle) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("nodeaudit: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line expected: " << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
}

// stdout as JSON; when it is not, a test failure that shows what was printed, and null.
inline nlohmann::json json_output(const ProcessResult& r) {
  try {
    return nlohmann::json::parse(r.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not JSON (" << e.what() << "): " << r.out << r.err;
    return nullptr;
  }
}

// The entry of probe `id` in a result document; a test failure naming it when it is missing.
inline nlohmann::json probe_in(const nlohmann::json& doc, const std::string& id) {
  for (const auto& p : doc["probes"])
    if (p["id"] == id) return p;
  ADD_FAILURE() << id << " missing from " << doc.dump();
  return nlohmann::json::object();
}

}  // namespace nodeaudit::proc
