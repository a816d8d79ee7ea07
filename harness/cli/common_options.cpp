#include "harness/cli/common_options.hpp"

namespace nodeaudit::cli {

void add_common_options(CLI::App& app, session::CommonOptions& o) {
  app.add_option("--level", o.level, "How long each probe runs: quick, standard or soak")->capture_default_str();
  app.add_option("--gpus", o.gpus, "GPU indices to use, e.g. 0,1 (default: all)");
  app.add_option("--data-dir", o.data_dir, "Directory on the storage under test, for probes that need files");
  app.add_option(
      "--repetitions", o.repetitions,
      "Timed repetitions per measurement (overrides the level's; at the quick level the total over the rounds, "
      "split between them, at least 1 a round; a probe's deadline grows in proportion)");
  app.add_option(
      "--rounds", o.rounds,
      "Measure each probe N times, interleaved, recording each round's median (default: quick 2, standard 3, "
      "soak 3; at the quick level the rounds split the level's repetitions, runtime and images)");
  app.add_flag("--keep-data", o.keep_data, "Keep generated data sets for the next run");
  app.add_option("--format", o.format, "Output: table or json")->capture_default_str();
  app.add_option("--out", o.out, "Result file or directory");
}

}  // namespace nodeaudit::cli
