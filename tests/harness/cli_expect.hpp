// Shared by the CLI tests: the nodeaudit binary run as a child process, its JSON output, and the
// check that bad input exits 2 with one line "nodeaudit: ..." naming the bad value.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_process.hpp"

namespace nodeaudit::proc {

inline ProcessResult run_nodeaudit(std::vector<std::string> args) {
  args.insert(args.begin(), NODEAUDIT_BINARY);
  return run_process(args);
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
