// What the job measured about itself (score/job_measured.hpp), from its records and the process
// tree's samples: means over the lead rank's measured steps; the ranks' own CPU summed over ranks;
// the tree's CPU from the samples over the measured window; the cores and GPU it had from `env`.
#pragma once

#include <nlohmann/json.hpp>

#include "harness/learn/job_runner.hpp"
#include "harness/learn/learn_document.hpp"
#include "harness/learn/learned_job.hpp"
#include "harness/score/job_measured.hpp"

namespace nodeaudit::learn {

// `env`: the learn result's env block (its cores, cpuset and quota, its GPUs).
score::JobMeasured job_measured(const LearnedJob& job, const JobRun& run, const JobLoad& load, const nlohmann::json& env);

}  // namespace nodeaudit::learn
