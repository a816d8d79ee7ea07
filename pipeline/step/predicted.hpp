// The scorer's prediction for the node the pipeline ran on: a result document holding the figures
// this run has (the emulated GPU's compute rate, the loader rates measured in the pipeline, the
// all-reduce busbw it emulated) is scored against the profile, and the predicted utilization is
// read back.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/score/profile.hpp"
#include "pipeline/step/compute_model.hpp"

namespace nodeaudit::pipeline {

struct NodeFigures {
  double gemm_tflops = 0;  // per GPU, the rate compute_s was derived from
  int gpus = 1;            // GPUs of the emulated node
  // Per GPU: the pipeline emulates one GPU's loader; with several GPUs each GPU's process runs
  // its own loader workers, so the node's storage figure is gpus x this (an assumption, labelled).
  double loader_samples_per_s = 0;             // reading only
  std::optional<double> decode_samples_per_s;  // decode + augmentation only, when the loader decodes
  bool framework_loader = false;               // the decode figure is a PyTorch DataLoader's (host.dataloader, PIL)
  std::string cache = "page";                  // storage.dataset's cache label for the data set
  double sample_bytes = 0;
  double busbw_gbps = 0;  // the all-reduce busbw the run emulated (0: none)
  double gradient_bytes = 0;
};

// A result document (results/SCHEMA.md) with the GPUs, gpu.gemm, storage.dataset/storage.read,
// and host.decode / comm.allreduce when the run had them.
nlohmann::json figures_as_result(const score::Profile& profile, const NodeFigures& figures);

struct Prediction {
  std::optional<double> utilization_pct;
  std::string why_not;  // when not predicted
};
Prediction predict_utilization(const score::Profile& profile, const NodeFigures& figures);

}  // namespace nodeaudit::pipeline
