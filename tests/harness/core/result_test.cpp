// The result document: metric summaries, schema validation, and refusing inputs that are not ours.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "harness/core/errors.hpp"
#include "harness/core/result.hpp"

namespace fs = std::filesystem;
using namespace nodeaudit;

namespace {
nlohmann::json sample_document() {
  nlohmann::json doc = new_result_document("quick", "", {"nodeaudit", "run"}, {{"host", {{"hostname", "h"}}}});
  const Metric m{"bandwidth", unit::gbps, Better::higher, {{"kernel", "triad"}}, {10, 12, 11}};
  doc["probes"].push_back(probe_entry({.id = "host.memory-bandwidth",
                                       .outcome = Outcome::ok(),
                                       .params = {{"threads", 2}},
                                       .duration_s = 1.5,
                                       .metrics = {m},
                                       .findings = {Finding{Severity::warn, "x.y", "msg"}}}));
  return doc;
}

std::string write_temp(const std::string& name, const std::string& content) {
  const fs::path p = fs::temp_directory_path() / ("nodeaudit-result-" + name + "-" + std::to_string(::getpid()) + ".json");
  std::ofstream(p) << content;
  return p.string();
}

std::string load_error(const std::string& content) {
  const std::string path = write_temp("bad", content);
  std::string message;
  try {
    load_result_file(path);
  } catch (const UsageError& e) {
    message = e.what();
  }
  fs::remove(path);
  return message;
}
}  // namespace

TEST(Result, MetricCarriesItsSummary) {
  const nlohmann::json m = metric_to_json(Metric{"iops", unit::iops, Better::higher, {}, {3, 1, 2}});
  EXPECT_EQ(m["n"], 3);
  EXPECT_DOUBLE_EQ(m["median"].get<double>(), 2);
  EXPECT_DOUBLE_EQ(m["min"].get<double>(), 1);
  EXPECT_DOUBLE_EQ(m["max"].get<double>(), 3);
  EXPECT_EQ(m["better"], "higher");
  EXPECT_EQ(m["samples"], nlohmann::json::array({3, 1, 2}));
  EXPECT_EQ(m["ci95"].size(), 2u);
}

TEST(Result, SampleDocumentValidates) {
  const auto problems = validate_result(sample_document());
  EXPECT_TRUE(problems.empty()) << problems.front();
}

TEST(Result, ValidationCatchesBrokenFields) {
  nlohmann::json doc = sample_document();
  doc["probes"][0]["status"] = "great";
  doc["probes"][0]["metrics"][0]["n"] = 7;
  doc["level"] = "fast";
  const auto problems = validate_result(doc);
  // Each broken field named, in document order: a count alone would pass with the wrong three.
  EXPECT_EQ(problems, (std::vector<std::string>{"level must be quick|standard|soak",
                                                "probes[0].status must be ok|skipped|failed|crashed|timeout|interrupted",
                                                "probes[0].metrics[0].n does not match the sample count"}));
}

TEST(Result, LoadRefusesWhatIsNotAResult) {
  EXPECT_NE(load_error("").find("is empty"), std::string::npos);
  EXPECT_NE(load_error("{\"schema\": \"nodeaudit.res").find("not valid JSON"), std::string::npos);
  EXPECT_NE(load_error("[1,2,3]").find("not a nodeaudit result"), std::string::npos);
  EXPECT_NE(load_error("{\"hello\": 1}").find("not a nodeaudit result"), std::string::npos);
  EXPECT_NE(load_error("{\"schema\": \"nodeaudit.result/2\"}").find("reads only \"nodeaudit.result/1\""), std::string::npos);
}

TEST(Result, LoadAcceptsAValidFile) {
  const std::string path = write_temp("good", sample_document().dump());
  EXPECT_EQ(load_result_file(path)["probes"][0]["id"], "host.memory-bandwidth");
  fs::remove(path);
}

TEST(Result, DefaultNameHasHostAndUtcTime) {
  const std::string name = default_result_name("node7");
  EXPECT_EQ(name.rfind("node7-", 0), 0u);
  EXPECT_EQ(name.substr(name.size() - 6), "Z.json");
  EXPECT_EQ(name.size(), std::string("node7-20261202T153000Z.json").size());
}
