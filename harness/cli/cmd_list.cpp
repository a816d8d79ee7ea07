// `nodeaudit list`: every probe with its description, whether this build can run it, and its needs.
// `nodeaudit list --figures schema|prometheus`: the docs' table of every probe's figures, written
// from the probe catalogue (results/SCHEMA.md and results/PROMETHEUS.md hold it between markers).
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "harness/cli/commands.hpp"
#include "harness/core/errors.hpp"
#include "harness/core/registry.hpp"
#include "harness/report/figure_tables.hpp"

namespace nodeaudit::cli {

namespace {

void print_probes() {
  for (const ProbeSpec* s : probe_registry().all()) {
    if (s->id.rfind("test.", 0) == 0) continue;
    std::string needs;
    for (Need n : s->needs) needs += (needs.empty() ? "" : ",") + to_string(n);
    const std::string built = s->body ? "built" : "not built (" + s->not_built_reason.value_or("?") + ")";
    // No reference run of the GPU probes on a GPU has been committed (results/reference/) yet.
    const bool needs_gpu =
        std::any_of(s->needs.begin(), s->needs.end(), [](Need n) { return n == Need::gpu || n == Need::multi_gpu; });
    std::cout << fmt::format("{:<24} {:<32} needs: {:<14} {}{}\n", s->id, built, needs.empty() ? "-" : needs,
                             s->description, needs_gpu ? " [not yet validated on real hardware]" : "");
  }
}

report::FigureTable figure_table_named(const std::string& name) {
  if (name == "schema") return report::FigureTable::schema;
  if (name == "prometheus") return report::FigureTable::prometheus;
  throw UsageError("--figures " + name, "expected schema (results/SCHEMA.md) or prometheus (results/PROMETHEUS.md)");
}

}  // namespace

void add_list_command(CLI::App& root, Action& action) {
  CLI::App* list = root.add_subcommand("list", "List every probe: id, description, built or why not, needs");
  auto figures = std::make_shared<std::string>();
  list->add_option("--figures", *figures,
                   "Instead, print the Markdown table of every probe's figures: schema (results/SCHEMA.md) or "
                   "prometheus (results/PROMETHEUS.md)");
  list->callback([&action, figures] {
    action = [figures] {
      if (figures->empty()) {
        print_probes();
      } else {
        std::cout << report::figure_table_markdown(figure_table_named(*figures));
      }
      return exit_ok;
    };
  });
}

}  // namespace nodeaudit::cli
