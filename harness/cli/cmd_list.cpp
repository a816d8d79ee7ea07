// `nodeaudit list`: every probe with its description, whether this build can run it, and its needs.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "harness/cli/commands.hpp"
#include "harness/core/registry.hpp"

namespace nodeaudit::cli {

void add_list_command(CLI::App& root, Action& action) {
  CLI::App* list = root.add_subcommand("list", "List every probe: id, description, built or why not, needs");
  list->callback([&action] {
    action = [] {
      for (const ProbeSpec* s : probe_registry().all()) {
        if (s->id.rfind("test.", 0) == 0) continue;
        std::string needs;
        for (Need n : s->needs) needs += (needs.empty() ? "" : ",") + to_string(n);
        const std::string built = s->body ? "built" : "not built (" + s->not_built_reason.value_or("?") + ")";
        // No reference run of the GPU probes on a GPU has been committed (results/reference/) yet.
        const bool needs_gpu = std::any_of(s->needs.begin(), s->needs.end(),
                                           [](Need n) { return n == Need::gpu || n == Need::multi_gpu; });
        std::cout << fmt::format("{:<24} {:<32} needs: {:<14} {}{}\n", s->id, built, needs.empty() ? "-" : needs,
                                 s->description, needs_gpu ? " [not yet validated on real hardware]" : "");
      }
      return exit_ok;
    };
  });
}

}  // namespace nodeaudit::cli
