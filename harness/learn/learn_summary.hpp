// The one-screen summary a learn run ends with (terminal text, or Markdown for --md): the learned
// figures, where the measured steps went, the job's CPU and reads, what could not be learned, and
// the next commands to run with the learned profile.
#pragma once

#include <optional>
#include <string>

#include "harness/learn/data_wait_check.hpp"
#include "harness/learn/learn_document.hpp"
#include "harness/learn/learned_job.hpp"

namespace nodeaudit::learn {

struct SummaryPaths {
  std::string command_text;
  std::string result_path;
  std::string profile_path;  // empty when no profile was written
  std::string no_profile_reason;
  std::optional<DataWaitCheck> data_wait;  // with a result of this node (`--result`): measured beside predicted
};

std::string render_learn_summary(const LearnedJob& job, const JobLoad& load, const SummaryPaths& paths);
std::string render_learn_markdown(const LearnedJob& job, const JobLoad& load, const SummaryPaths& paths);

}  // namespace nodeaudit::learn
