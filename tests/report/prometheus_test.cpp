// The Prometheus textfile, parsed back the way the exposition format defines it: every family has
// HELP and TYPE before its samples, no series repeats, and each value is the metric's median.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include <unistd.h>

#include "errors.hpp"
#include "fixture_util.hpp"
#include "report/prometheus.hpp"

using namespace nodeaudit;
using namespace nodeaudit::test;
namespace fs = std::filesystem;

namespace {

struct Parsed {
  std::map<std::string, double> samples;  // "name{labels}" -> value
  std::map<std::string, std::string> type, help;
};

// Fails the test on any line that is neither a comment nor a well-formed sample.
Parsed parse_exposition(const std::string& text) {
  static const std::regex sample(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? (\S+)$)");
  static const std::regex meta(R"(^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$)");
  Parsed parsed;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, meta)) {
      (m[1] == "HELP" ? parsed.help : parsed.type)[m[2]] = m[3];
    } else if (std::regex_match(line, m, sample)) {
      const std::string name = m[1];
      EXPECT_TRUE(parsed.type.count(name)) << "sample before its TYPE: " << line;
      const std::string series = name + m[2].str();
      EXPECT_FALSE(parsed.samples.count(series)) << "repeated series: " << line;
      parsed.samples[series] = std::stod(m[5]);
    } else {
      EXPECT_EQ(line.rfind("# ", 0), 0u) << "not a comment nor a sample: " << line;
    }
  }
  return parsed;
}

}  // namespace

TEST(Prometheus, ParsesBackToTheMedians) {
  const Parsed p = parse_exposition(render_prometheus(load_compare("baseline.json")));
  EXPECT_DOUBLE_EQ(p.samples.at("nodeaudit_gpu_memory_bandwidth_bandwidth{gpu=\"0\",kernel=\"copy\"}"), 3000);
  EXPECT_DOUBLE_EQ(p.samples.at("nodeaudit_gpu_memory_bandwidth_bandwidth{gpu=\"1\",kernel=\"triad\"}"), 3080);
  EXPECT_DOUBLE_EQ(p.samples.at("nodeaudit_comm_allreduce_busbw{gpus=\"2\",size=\"1073741824\"}"), 350);
  EXPECT_DOUBLE_EQ(p.samples.at("nodeaudit_storage_read_latency_p99{block_size=\"1048576\",cache=\"none\",pattern=\"seq\",workers=\"4\"}"), 900);
  EXPECT_DOUBLE_EQ(p.samples.at("nodeaudit_probe_ok{probe=\"gpu.gemm\",status=\"ok\"}"), 1);
  EXPECT_EQ(p.type.at("nodeaudit_gpu_gemm_tflops"), "gauge");
  EXPECT_NE(p.help.at("nodeaudit_gpu_gemm_tflops").find("TFLOP/s"), std::string::npos);
  EXPECT_NE(p.help.at("nodeaudit_storage_read_latency_p99").find("lower is better"), std::string::npos);
  // 24 metrics + 7 probe status + 7 probe durations.
  EXPECT_EQ(p.samples.size(), 24u + 7u + 7u);
}

TEST(Prometheus, CrashedProbeIsZeroWithItsStatus) {
  const Parsed p = parse_exposition(render_prometheus(load_compare("candidate-probe-crashed.json")));
  EXPECT_DOUBLE_EQ(p.samples.at("nodeaudit_probe_ok{probe=\"comm.allreduce\",status=\"crashed\"}"), 0);
  EXPECT_FALSE(p.type.count("nodeaudit_comm_allreduce_busbw"));
}

TEST(Prometheus, LabelValuesAreEscaped) {
  nlohmann::json doc = load_compare("baseline.json");
  doc["probes"][0]["metrics"][0]["labels"]["kernel"] = "a\"b\\c";
  const std::string text = render_prometheus(doc);
  EXPECT_NE(text.find(R"(kernel="a\"b\\c")"), std::string::npos);
  parse_exposition(text);
}

TEST(Prometheus, TextfileReplacesOurOwnFileButNoOther) {
  const fs::path dir = fs::temp_directory_path() / ("nodeaudit-prom-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "nodeaudit.prom").string();
  write_prometheus_textfile(load_compare("baseline.json"), path);
  write_prometheus_textfile(load_compare("candidate-hbm-regression.json"), path);  // the next run replaces it
  EXPECT_DOUBLE_EQ(parse_exposition(read_text(path)).samples.at("nodeaudit_gpu_memory_bandwidth_bandwidth{gpu=\"0\",kernel=\"copy\"}"), 2700);
  const std::string foreign = (dir / "other.prom").string();
  std::ofstream(foreign) << "node_custom_metric 1\n";
  EXPECT_THROW(write_prometheus_textfile(load_compare("baseline.json"), foreign), UsageError);
  EXPECT_EQ(read_text(foreign), "node_custom_metric 1\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2) << "no temp file left behind";
  fs::remove_all(dir);
}
