// What the records of one job say, as figures: the step timing of the measured steps, and every
// profile field with how it was obtained ("measured: ...", "default for the category: ...",
// "assumption: ..."). Pure: records in, figures out, so the arithmetic is tested on its own.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/learn/rank_records.hpp"

namespace nodeaudit::learn {

// A profile field's value and the sentence the TOML comment and the summary give it.
struct Learned {
  double value = 0;
  std::string how;
};
struct LearnedText {
  std::string value;
  std::string how;
};

struct StepShares {
  double data_wait = 0, backward = 0, optimizer = 0, checkpoint = 0, other = 0;  // fractions of step time
};

struct LearnedTiming {
  std::vector<double> measured_step_s;  // the lead rank's measured steps, in order
  double step_time_s = 0;               // median of measured_step_s
  double samples_per_step = 0;          // per rank
  double samples_per_s = 0;             // all ranks
  StepShares shares;
  std::vector<double> data_wait_share_per_step;
};

struct LearnedProfileFields {
  std::string category, category_how;
  Learned parameters, trainable_parameters, bytes_per_parameter, gradient_bytes_per_parameter;
  Learned flops_per_sample, activation_bytes_per_sample;
  std::optional<Learned> tokens_per_sample;
  LearnedText dtype, optimizer;
  Learned micro_batch, accumulation;
  Learned sample_size, dataset_size, device_bytes_per_sample;
  LearnedText access, decode, loader;
  Learned model_efficiency, comm_overlap;
  std::optional<Learned> checkpoint_size, checkpoint_interval_s;
  Learned target_samples;
};

struct LearnInputs {
  int warmup = 0, measured = 0, counted = 1;
  // Median model_efficiency of the shipped profiles per category (the category default).
  std::vector<std::pair<std::string, double>> category_efficiency;
  // This node's measured GEMM rate per dtype (`gpu.gemm tflops`, the slowest GPU's median) from a
  // result (`--result FILE`), and that file's name: model_efficiency is measured against it when the
  // job ran on a GPU.
  std::map<std::string, double> gemm_tflops;
  std::string gemm_source;
};

struct LearnedJob {
  int steps_done = 0;       // the least over the ranks
  int steps_needed = 0;     // warm-up + measured + counted
  int warmup = 0, measured = 0, counted = 1;
  int world_size = 1;
  bool complete = false;    // every rank took its whole window: a profile can be written
  bool distributed = false, ddp = false, compiled = false, gpu = false;
  std::string backend;
  double all_reduce_bytes_per_step = 0;  // gradient bytes the all-reduce moves per step (per rank)
  std::string all_reduce_how;
  LearnedTiming timing;
  LearnedProfileFields fields;
  std::vector<std::string> notes;  // what could not be learned, and why
};

LearnedJob learn_from_records(const JobRecords& records, const LearnInputs& inputs);

}  // namespace nodeaudit::learn
