// pipeline.step --loader pytorch: the training steps run in the user's Python on a real PyTorch
// DataLoader (torch_loader_sweep.py --train-steps) over the same sample files the native loader
// reads, PIL decode + torchvision's transform for JPEG samples, raw files as uint8 tensors
// otherwise. Compute and the exposed all-reduce are emulated there as sleeps of the plan's times,
// as DLIO does; data_wait is the time next() blocked. The step records become the pipeline's
// StepTimings, so AU and the stage figures are computed exactly as for the native loader.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "pipeline/step/pipeline_run.hpp"

namespace nodeaudit::dataloader {
struct ScratchDir;
}

namespace nodeaudit::pipeline {

// The Python, the script and a scratch directory, checked before any sample is made.
struct FrameworkLoader {
  std::string python_path;
  std::string script;
  nlohmann::json versions;  // the preflight's "loader" line
  std::shared_ptr<dataloader::ScratchDir> scratch;
};

// nullopt when --python imports torch and torchvision (`loader` is filled); else the outcome:
// bad input (a --python that is not there or not executable), skipped (no framework), failed.
std::optional<Outcome> check_framework_loader(ProbeContext& ctx, FrameworkLoader& loader);

// Runs the plan's steps on the DataLoader over `samples` and records them as run_on_dataset does.
Outcome run_framework_steps(ProbeContext& ctx, const PipelinePlan& plan, const SampleFiles& samples,
                            const FrameworkLoader& loader);

}  // namespace nodeaudit::pipeline
