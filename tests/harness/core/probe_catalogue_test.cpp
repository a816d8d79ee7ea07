// Every probe says what its figures mean: each registered probe (this binary links every probe
// library, as the CLI does) has a meaning and declared figures, every declaration belongs to a
// registered probe, and every figure a recorded result holds for a registered probe is declared with
// the unit and direction it was recorded with.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "harness/core/context.hpp"
#include "harness/core/probe_catalogue.hpp"
#include "harness/core/registry.hpp"
#include "tests/support/fixtures.hpp"

using namespace nodeaudit;
using nlohmann::json;

namespace {

const std::set<std::string> known_units{unit::gbps,  unit::tflops,  unit::iops,         unit::us,
                                        unit::s,     unit::bytes,   unit::count,        unit::percent,
                                        unit::images_per_s, unit::samples_per_s, unit::s_per_gb};

std::vector<std::filesystem::path> recorded_results() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(NODEAUDIT_FIXTURES))
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST(ProbeCatalogue, EveryRegisteredProbeDeclaresItsMeaningAndFigures) {
  const auto probes = probe_registry().all();
  ASSERT_GE(probes.size(), 20u) << "this binary links every probe library";
  for (const ProbeSpec* spec : probes) {
    SCOPED_TRACE(spec->id);
    EXPECT_FALSE(spec->meaning.empty()) << "no meaning: declare it in the probe folder's figures.cpp";
    if (spec->role == ProbeRole::configuration_audit) {
      EXPECT_TRUE(spec->figures.empty()) << "a configuration audit records findings, not figures";
      continue;
    }
    EXPECT_FALSE(spec->figures.empty()) << "no figures declared: declare them in the probe folder's figures.cpp";
    std::set<std::string> names;
    for (const FigureSpec& figure : spec->figures) {
      SCOPED_TRACE(figure.name);
      EXPECT_TRUE(names.insert(figure.name).second) << "declared twice";
      EXPECT_TRUE(known_units.count(figure.unit)) << "unit '" << figure.unit << "' is not one of metric.hpp's";
      EXPECT_FALSE(figure.meaning.empty());
      const FigureSpec* found = declared_figure(spec->id, figure.name);
      ASSERT_NE(found, nullptr) << "the catalogue's lookup does not find the spec's figure";
      EXPECT_EQ(found->unit, figure.unit);
    }
  }
}

TEST(ProbeCatalogue, EveryDeclarationBelongsToARegisteredProbe) {
  for (const ProbeFigures& declared : probe_catalogue())
    EXPECT_NE(probe_registry().find(declared.probe_id), nullptr) << declared.probe_id << " is declared but no probe has that id";
}

TEST(ProbeCatalogue, EveryRecordedFigureIsDeclaredAsRecorded) {
  int figures_checked = 0;
  for (const auto& path : recorded_results()) {
    json doc;
    try {
      doc = json::parse(test_files::read_text(path.string()));
    } catch (const json::exception&) {
      continue;  // the fixtures of unreadable input
    }
    if (!doc.is_object() || !doc.contains("probes") || !doc["probes"].is_array()) continue;
    for (const json& probe : doc["probes"]) {
      const std::string id = probe.value("id", "");
      if (!probe_registry().find(id) || !probe.contains("metrics") || !probe["metrics"].is_array()) continue;
      for (const json& metric : probe["metrics"]) {
        const std::string name = metric.value("name", "");
        SCOPED_TRACE(path.filename().string() + ": " + id + " " + name);
        const FigureSpec* figure = declared_figure(id, name);
        ASSERT_NE(figure, nullptr) << "recorded but not declared";
        // Not the direction: a result of an earlier version keeps its own (storage.dataset's knee was
        // once recorded higher-is-better), and the reports read it from the record. A live run's
        // direction is checked below.
        EXPECT_EQ(metric.value("unit", ""), figure->unit);
        if (metric.contains("labels") && metric["labels"].is_object()) {
          for (const auto& [key, value] : metric["labels"].items())
            EXPECT_TRUE(std::count(figure->labels.begin(), figure->labels.end(), key)) << "label '" << key << "' not declared";
        }
        ++figures_checked;
      }
    }
  }
  EXPECT_GT(figures_checked, 100) << "the recorded results under " << NODEAUDIT_FIXTURES << " hold probe figures";
}

// A real probe run in this process (host.memory-bandwidth on small arrays, one thread): every
// figure it records is declared with the unit, direction and labels it was recorded with.
TEST(ProbeCatalogue, ALiveRunRecordsOnlyDeclaredFigures) {
  const ProbeSpec* spec = probe_registry().find("host.memory-bandwidth");
  ASSERT_NE(spec, nullptr);
  ASSERT_TRUE(spec->body);
  RunSettings settings;
  settings.repetitions = 2;
  ProbeContext ctx(resolve_params(spec->params, {{"array-size", "8MiB"}, {"threads", "1"}, {"huge-pages", "false"}}, Level::quick),
                   settings, nullptr, std::chrono::steady_clock::now() + std::chrono::minutes(2));
  const Outcome outcome = spec->body(ctx);
  ASSERT_EQ(outcome.status, Status::ok) << outcome.reason;
  ASSERT_FALSE(ctx.metrics().empty());
  for (const Metric& metric : ctx.metrics()) {
    SCOPED_TRACE(metric.name);
    const FigureSpec* figure = declared_figure(spec->id, metric.name);
    ASSERT_NE(figure, nullptr) << "recorded but not declared";
    EXPECT_EQ(metric.unit, figure->unit);
    ASSERT_TRUE(figure->better.has_value());
    EXPECT_EQ(metric.better, *figure->better);
    for (const auto& [key, value] : metric.labels)
      EXPECT_TRUE(std::count(figure->labels.begin(), figure->labels.end(), key)) << "label '" << key << "' not declared";
  }
}
