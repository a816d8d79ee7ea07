// The docs' figure tables are what the probe catalogue says now: results/SCHEMA.md's metric
// catalogue and results/PROMETHEUS.md's metric names, between their generated-region markers, equal
// `nodeaudit list --figures schema|prometheus`. A failure names the doc's first differing line.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "harness/core/probe_catalogue.hpp"
#include "harness/report/figure_tables.hpp"
#include "harness/report/prometheus_names.hpp"
#include "tests/support/cli_process.hpp"

using namespace nodeaudit;
using namespace nodeaudit::report;

namespace {

std::string read_source_file(const std::string& relative) {
  const std::string path = std::string(NODEAUDIT_SOURCE_DIR) + "/" + relative;
  std::ifstream in(path);
  if (!in) ADD_FAILURE() << "cannot read " << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The line number in the doc (the region starts after `region_first_line`), the doc's line and the
// generator's, for the first line where they part; empty when they are equal.
std::string first_difference(const std::string& in_doc, const std::string& generated, std::size_t region_first_line) {
  const std::vector<std::string> doc_lines = lines_of(in_doc), new_lines = lines_of(generated);
  for (std::size_t i = 0; i < std::max(doc_lines.size(), new_lines.size()); ++i) {
    const std::string doc_line = i < doc_lines.size() ? doc_lines[i] : "(the region ends here)";
    const std::string new_line = i < new_lines.size() ? new_lines[i] : "(the table ends here)";
    if (doc_line != new_line)
      return "line " + std::to_string(region_first_line + i) + " differs\n  doc:       " + doc_line +
             "\n  generated: " + new_line;
  }
  return in_doc == generated ? "" : "the region's last line break differs";
}

void expect_doc_matches(const std::string& relative, FigureTable table) {
  const std::string doc = read_source_file(relative);
  const std::optional<std::string> region = generated_region(doc, table);
  ASSERT_TRUE(region.has_value()) << relative << " has no region from a line '" << generated_region_begin(table)
                                  << "' to a line '" << generated_region_end << "'";
  const std::string begin_marker = generated_region_begin(table);
  const std::size_t marker_line =
      1 + static_cast<std::size_t>(std::count(doc.begin(), doc.begin() + doc.find(begin_marker), '\n'));
  const std::string difference = first_difference(*region, figure_table_markdown(table), marker_line + 1);
  if (!difference.empty())
    ADD_FAILURE() << relative << " is out of date with the probe catalogue: " << difference << "\nput the output of `"
                  << figure_table_command(table) << "` between its markers";
}

}  // namespace

TEST(FigureDocs, SchemaMetricCatalogueIsGenerated) {
  expect_doc_matches("results/SCHEMA.md", FigureTable::schema);
}

TEST(FigureDocs, PrometheusMetricNamesAreGenerated) {
  expect_doc_matches("results/PROMETHEUS.md", FigureTable::prometheus);
}

// Every declared figure has a row in both tables, the families named by prometheus_names.
TEST(FigureDocs, EveryDeclaredFigureHasARow) {
  const std::string schema = figure_table_markdown(FigureTable::schema);
  const std::string prometheus = figure_table_markdown(FigureTable::prometheus);
  int figures = 0;
  for (const ProbeFigures& probe : probe_catalogue())
    for (const FigureSpec& figure : probe.figures) {
      SCOPED_TRACE(probe.probe_id + " " + figure.name);
      const std::string row_start = "| `" + probe.probe_id + "` | `" + figure.name + "`";
      EXPECT_NE(schema.find(row_start), std::string::npos);
      EXPECT_NE(prometheus.find(row_start), std::string::npos);
      EXPECT_NE(prometheus.find("`" + prometheus_series(probe.probe_id, figure.name, figure.unit).family),
                std::string::npos);
      ++figures;
    }
  EXPECT_GT(figures, 60) << "the catalogue links every probe folder's figures";
  EXPECT_NE(schema.find("| `comm.host-fabric` | `pair_bw` [a, b, size] | GB/s | higher |"), std::string::npos)
      << schema;
  EXPECT_NE(prometheus.find("`nodeaudit_storage_read_latency_seconds{quantile=\"0.99\"}` | 1e-6 |"), std::string::npos)
      << prometheus;
  EXPECT_NE(schema.find("| `host.config` | findings only |"), std::string::npos) << "a configuration audit's row";
}

TEST(FigureDocs, RegionIsFoundOnlyBetweenWholeMarkerLines) {
  const std::string begin = generated_region_begin(FigureTable::schema) + "\n";
  const std::string end = std::string(generated_region_end) + "\n";
  EXPECT_EQ(generated_region("intro\n" + begin + "| a |\n| b |\n" + end + "after\n", FigureTable::schema),
            "| a |\n| b |\n");
  EXPECT_EQ(generated_region(begin + end, FigureTable::schema), "");
  EXPECT_EQ(generated_region("intro\n" + begin + "| a |\n", FigureTable::schema), std::nullopt) << "no end marker";
  EXPECT_EQ(generated_region(begin + "| a |\n" + end, FigureTable::prometheus), std::nullopt)
      << "the other table's marker";
}

// The command each doc's marker names prints the same table, and names what it accepts otherwise.
TEST(FigureDocs, ListFiguresPrintsTheTables) {
  for (const FigureTable table : {FigureTable::schema, FigureTable::prometheus}) {
    const std::string word = table == FigureTable::schema ? "schema" : "prometheus";
    const auto r = proc::run_process({NODEAUDIT_BINARY, "list", "--figures", word});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, figure_table_markdown(table)) << word;
  }
  const auto bad = proc::run_process({NODEAUDIT_BINARY, "list", "--figures", "html"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--figures html: expected schema (results/SCHEMA.md) or prometheus (results/PROMETHEUS.md)"),
            std::string::npos)
      << bad.err;
}
