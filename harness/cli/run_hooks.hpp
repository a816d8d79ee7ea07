// The options of `run` beyond the common ones: price, --target-gpus, --expect, --python,
// --prometheus, declared for the parser. What they do (the profile, the assessment, the side
// outputs) is the session engine's: session/workload.hpp, whose names are brought in here.
#pragma once

#include <CLI/CLI.hpp>

#include "harness/session/workload.hpp"

namespace nodeaudit::cli {

using session::assess_run;
using session::left_out_by_profile;
using session::prepare_run_extras;
using session::probe_params_for;
using session::render_run_assessment;
using session::render_run_summary;
using session::RunExtras;
using session::write_run_side_outputs;

void add_run_extras(CLI::App& run, RunExtras& extras);

}  // namespace nodeaudit::cli
