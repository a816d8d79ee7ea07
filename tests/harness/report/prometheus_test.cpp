// The Prometheus textfile, parsed back the way the exposition format defines it: every family has
// HELP and TYPE before its samples, no series repeats, and each value is the metric's median in
// Prometheus's base units; the verdict and the expected-value grades are state sets.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include <unistd.h>

#include "harness/core/errors.hpp"
#include "harness/report/prometheus.hpp"
#include "harness/report/prometheus_names.hpp"
#include "harness/score/score.hpp"
#include "tests/harness/report/fixture_util.hpp"

using namespace nodeaudit;
using namespace nodeaudit::test;
using nodeaudit::report::prometheus_series;
using nodeaudit::report::PrometheusSeries;
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

TEST(Prometheus, ParsesBackToTheMediansInBaseUnits) {
  const Parsed p = parse_exposition(render_prometheus(load_compare("baseline.json")));
  // 3000 GB/s -> bytes per second; 900 us -> seconds, the percentile a quantile of one summary.
  EXPECT_DOUBLE_EQ(p.samples.at("nodeaudit_gpu_memory_bandwidth_bytes_per_second{gpu=\"0\",kernel=\"copy\"}"), 3000e9);
  EXPECT_DOUBLE_EQ(p.samples.at("nodeaudit_gpu_memory_bandwidth_bytes_per_second{gpu=\"1\",kernel=\"triad\"}"), 3080e9);
  EXPECT_DOUBLE_EQ(p.samples.at("nodeaudit_comm_allreduce_busbw_bytes_per_second{gpus=\"2\",size=\"1073741824\"}"),
                   350e9);
  EXPECT_NEAR(p.samples.at("nodeaudit_storage_read_latency_seconds{block_size=\"1048576\",cache=\"none\",pattern="
                           "\"seq\",quantile=\"0.99\",workers=\"4\"}"),
              900e-6, 1e-15);
  EXPECT_DOUBLE_EQ(p.samples.at("nodeaudit_probe_ok{probe=\"gpu.gemm\",status=\"ok\"}"), 1);
  EXPECT_EQ(p.type.at("nodeaudit_gpu_gemm_flops_per_second"), "gauge");
  EXPECT_EQ(p.type.at("nodeaudit_storage_read_latency_seconds"), "summary");
  EXPECT_NE(p.help.at("nodeaudit_gpu_gemm_flops_per_second").find("the probe reports TFLOP/s"), std::string::npos);
  EXPECT_NE(p.help.at("nodeaudit_storage_read_latency_seconds").find("lower is better"), std::string::npos);
  EXPECT_FALSE(p.type.count("nodeaudit_verdict")) << "an unscored result has no verdict";
  // 24 metrics + 7 probe status + 7 probe durations.
  EXPECT_EQ(p.samples.size(), 24u + 7u + 7u);
}

TEST(Prometheus, NamesFollowBaseUnitsAndKeepTheProbesWord) {
  struct Case {
    const char *probe, *metric, *unit, *family;
    double scale;
    const char* quantile;  // "" when none
  };
  for (const Case& c : std::initializer_list<Case>{
           {"storage.read", "cpu_per_gb", "s/GB", "nodeaudit_storage_read_cpu_seconds_per_byte", 1e-9, ""},
           {"storage.read", "iops", "IOPS", "nodeaudit_storage_read_operations_per_second", 1, ""},
           {"storage.read", "latency_p50", "us", "nodeaudit_storage_read_latency_seconds", 1e-6, "0.5"},
           {"storage.read", "latency_max", "us", "nodeaudit_storage_read_latency_seconds", 1e-6, "1"},
           {"storage.dataset", "latency_p5", "us", "nodeaudit_storage_dataset_latency_seconds", 1e-6, "0.05"},
           {"comm.allreduce", "time_us", "us", "nodeaudit_comm_allreduce_time_seconds", 1e-6, ""},
           {"comm.allreduce", "latency_small", "us", "nodeaudit_comm_allreduce_latency_small_seconds", 1e-6, ""},
           {"comm.allreduce", "size_at_90pct", "bytes", "nodeaudit_comm_allreduce_size_at_90pct_bytes", 1, ""},
           {"gpu.gemm", "tflops", "TFLOP/s", "nodeaudit_gpu_gemm_flops_per_second", 1e12, ""},
           {"gpu.gemm", "pct_of_peak", "%", "nodeaudit_gpu_gemm_peak_ratio", 0.01, ""},
           {"gpu.stress", "sustained_tflops", "TFLOP/s", "nodeaudit_gpu_stress_sustained_flops_per_second", 1e12, ""},
           {"gpu.memory-integrity", "bytes_tested", "bytes", "nodeaudit_gpu_memory_integrity_tested_bytes", 1, ""},
           {"gpu.memory-integrity", "errors", "count", "nodeaudit_gpu_memory_integrity_errors", 1, ""},
           {"host.memory-bandwidth", "bandwidth", "GB/s", "nodeaudit_host_memory_bandwidth_bytes_per_second", 1e9, ""},
           {"storage.checkpoint", "stall_s", "s", "nodeaudit_storage_checkpoint_stall_seconds", 1, ""},
           {"pipeline.step", "au", "%", "nodeaudit_pipeline_step_accelerator_utilization_ratio", 0.01, ""},
           {"host.decode", "images_per_s_per_core", "images/s", "nodeaudit_host_decode_images_per_second_per_core", 1,
            ""},
           {"test.x", "widgets", "furlongs", "nodeaudit_test_x_widgets", 1, ""},  // unknown unit: as written
       }) {
    const PrometheusSeries series = prometheus_series(c.probe, c.metric, c.unit);
    EXPECT_EQ(series.family, c.family) << c.probe << " " << c.metric;
    EXPECT_DOUBLE_EQ(series.scale, c.scale) << c.metric;
    EXPECT_EQ(series.quantile.value_or(""), c.quantile) << c.metric;
  }
}

TEST(Prometheus, TheDocumentedNamesAreTheNamesWritten) {
  // results/PROMETHEUS.md's table: | `probe` | `metric` | unit | `family{quantile="q"}` | scale |
  const std::string doc = read_text(std::string(NODEAUDIT_FIXTURES) + "/../../results/PROMETHEUS.md");
  static const std::regex row(
      R"re(\| `([a-z0-9.-]+)` \| `([a-z0-9_]+)` \| ([^|]+) \| `([a-z0-9_]+)(\{quantile="([0-9.]+)"\})?` \| ([0-9e.-]+) \|)re");
  int rows = 0;
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), row); it != std::sregex_iterator(); ++it, ++rows) {
    const std::smatch& m = *it;
    std::string unit = m[3];
    unit.erase(unit.find_last_not_of(' ') + 1);
    const PrometheusSeries series = prometheus_series(m[1], m[2], unit);
    EXPECT_EQ(series.family, m[4].str()) << m[0];
    EXPECT_EQ(series.quantile.value_or(""), m[6].str()) << m[0];
    EXPECT_DOUBLE_EQ(series.scale, std::stod(m[7])) << m[0];
  }
  EXPECT_GE(rows, 50) << "the metric table of results/PROMETHEUS.md was not found";
}

TEST(Prometheus, VerdictRulesAndGradesAreStateSets) {
  nlohmann::json doc = load_result_file(results_fixture("h100-graded.json"));
  const score::Profile profile = score::load_profile(std::string(NODEAUDIT_FIXTURES) + "/profiles/balance-test.toml");
  doc["assessment"] = score::assess(profile, doc, {});
  const std::string verdict = doc["assessment"]["overall"]["verdict"];
  const Parsed p = parse_exposition(render_prometheus(doc));
  EXPECT_EQ(p.type.at("nodeaudit_verdict"), "gauge");
  double states = 0;
  for (const char* each : {"PASS", "WARN", "FAIL", "NOT_JUDGED"}) {
    const double value =
        p.samples.at("nodeaudit_verdict{profile=\"balance-test\",verdict=\"" + std::string(each) + "\"}");
    EXPECT_EQ(value, each == verdict ? 1 : 0) << each;
    states += value;
  }
  EXPECT_EQ(states, 1);
  // The recorded fixture: GPU 1's bf16 GEMM 11.6% below its reference (WARN), GPU 7's pinned H2D past FAIL.
  const std::string gemm1 = "figure=\"gpu.gemm tflops [dtype=bf16]\",gpu=\"1\",";
  EXPECT_EQ(p.samples.at("nodeaudit_expected_grade{" + gemm1 + "grade=\"WARN\",model=\"h100\"}"), 1);
  EXPECT_EQ(p.samples.at("nodeaudit_expected_grade{" + gemm1 + "grade=\"PASS\",model=\"h100\"}"), 0);
  EXPECT_NEAR(p.samples.at("nodeaudit_expected_below_ratio{" + gemm1 + "model=\"h100\"}"), 0.116, 0.0005);
  const std::string h2d7 = "figure=\"gpu.pcie h2d_bandwidth [memory=pinned, mode=single]\",gpu=\"7\",";
  EXPECT_EQ(p.samples.at("nodeaudit_expected_grade{" + h2d7 + "grade=\"FAIL\",model=\"h100\"}"), 1);
  EXPECT_EQ(p.samples.at("nodeaudit_rule_verdict{profile=\"balance-test\",rule=\"expected_values\",verdict=\"FAIL\"}"),
            1);
  EXPECT_DOUBLE_EQ(
      p.samples.at("nodeaudit_expected_limit_ratio{figure=\"h2d_pinned\",limit=\"fail\",source=\"built-in table\"}"),
      0.25);
}

TEST(Prometheus, CrashedProbeIsZeroWithItsStatus) {
  const Parsed p = parse_exposition(render_prometheus(load_compare("candidate-probe-crashed.json")));
  EXPECT_DOUBLE_EQ(p.samples.at("nodeaudit_probe_ok{probe=\"comm.allreduce\",status=\"crashed\"}"), 0);
  EXPECT_FALSE(p.type.count("nodeaudit_comm_allreduce_busbw_bytes_per_second"));
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
  EXPECT_DOUBLE_EQ(parse_exposition(read_text(path))
                       .samples.at("nodeaudit_gpu_memory_bandwidth_bytes_per_second{gpu=\"0\",kernel=\"copy\"}"),
                   2700e9);
  const std::string foreign = (dir / "other.prom").string();
  std::ofstream(foreign) << "node_custom_metric 1\n";
  EXPECT_THROW(write_prometheus_textfile(load_compare("baseline.json"), foreign), UsageError);
  EXPECT_EQ(read_text(foreign), "node_custom_metric 1\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2) << "no temp file left behind";
  fs::remove_all(dir);
}
