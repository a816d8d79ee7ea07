// What `run --target-gpus` hands pipeline.step, so the emulated step uses the same GPU figures as
// the assessment: a model of the table by name, a GPU from a file as its compute time and busbw.
// What `run --profile` hands storage.dataset, so it reads the way the job reads: windows of a mapped
// file for an np.memmap job, and through the page cache when the job's data set fits in it.
#include <gtest/gtest.h>

#include <fstream>

#include "harness/core/units.hpp"
#include "harness/session/workload.hpp"

namespace nodeaudit::session {
namespace {

ProbeSpec pipeline_like() {
  ProbeSpec spec;
  spec.id = "pipeline.step";
  for (const char* name : {"emulate-compute", "gpus-in-node", "compute-time", "busbw", "sample-size"}) {
    ParamSpec param;
    param.name = name;
    spec.params.push_back(param);
  }
  return spec;
}

TEST(RunTargetGpus, ATableTargetNamesTheEmulatedGpuAndItsCount) {
  RunExtras extras;
  extras.target_gpus = "a100-80gbx4";
  prepare_run_extras("llm-finetune-7b", extras);
  const auto texts = probe_params_for(pipeline_like(), extras);
  EXPECT_EQ(texts.at("emulate-compute"), "a100-80gb");
  EXPECT_EQ(texts.at("gpus-in-node"), "4");
  EXPECT_EQ(texts.count("compute-time"), 0u);
}

TEST(RunTargetGpus, AFileTargetGivesTheComputeTimeAndBusbwItsFiguresImply) {
  const std::string path = ::testing::TempDir() + "/b200-target.toml";
  std::ofstream(path) << "name = \"b200\"\ncount = 8\nsource = \"example\"\nmemory = \"180GB\"\n"
                         "memory_bandwidth_gbps = 8000\nh2d_gbps = 55\nallreduce_busbw_gbps = 700\n"
                         "[gemm_tflops]\nbf16 = 2000\n";
  RunExtras extras;
  extras.target_gpus = path;
  prepare_run_extras("llm-finetune-7b", extras);
  const auto texts = probe_params_for(pipeline_like(), extras);
  EXPECT_EQ(texts.count("emulate-compute"), 0u);
  EXPECT_EQ(texts.at("gpus-in-node"), "8");
  // 16 samples x 2048 tokens x 6 x 6.74e9 FLOP / (2000 TFLOP/s x 0.54)
  EXPECT_NEAR(parse_duration_s(texts.at("compute-time")), 16 * 2048 * 6 * 6.74e9 / (2000e12 * 0.54), 1e-6);
  EXPECT_EQ(texts.at("busbw"), "700");
  std::remove(path.c_str());
}

TEST(RunTargetGpus, NoTargetLeavesThePipelinesOwnChoice) {
  RunExtras extras;
  prepare_run_extras("llm-finetune-7b", extras);
  const auto texts = probe_params_for(pipeline_like(), extras);
  EXPECT_EQ(texts.count("emulate-compute"), 0u);
  EXPECT_EQ(texts.count("gpus-in-node"), 0u);
}

ProbeSpec storage_dataset_like() {
  ProbeSpec spec;
  spec.id = "storage.dataset";
  for (const char* name : {"sample-size", "direct", "read", "file-size"}) {
    ParamSpec param;
    param.name = name;
    spec.params.push_back(param);
  }
  return spec;
}

RunExtras extras_for(score::AccessPattern access, double dataset_bytes) {
  RunExtras extras;
  prepare_run_extras("llm-finetune-7b", extras);
  extras.profile->data.access = access;
  extras.profile->data.sample_bytes = 2048;
  extras.profile->data.dataset_bytes = dataset_bytes;
  return extras;
}

TEST(RunProfileStorage, AMemmapJobIsMeasuredAsWindowsOfAMappedFileItsDataSetsSize) {
  const auto texts = probe_params_for(storage_dataset_like(), extras_for(score::AccessPattern::memmap, 64 << 20));
  EXPECT_EQ(texts.at("read"), "mmap");
  EXPECT_EQ(texts.at("file-size"), std::to_string(64 << 20));
  EXPECT_EQ(texts.at("sample-size"), "2048");
  // 1 PB fits no page cache: read cold; and the mapped file stops at 4 GiB.
  const auto huge = probe_params_for(storage_dataset_like(), extras_for(score::AccessPattern::memmap, 1e15));
  EXPECT_EQ(huge.count("direct"), 0u);
  EXPECT_EQ(huge.at("file-size"), std::to_string(4ll << 30));
}

TEST(RunProfileStorage, ADataSetThatFitsThePageCacheIsReadThroughIt) {
  // 64 KiB fits the free memory of any machine that runs the tests; 1 PB fits none.
  EXPECT_EQ(probe_params_for(storage_dataset_like(), extras_for(score::AccessPattern::small_files, 64 << 10)).at("direct"), "false");
  EXPECT_EQ(probe_params_for(storage_dataset_like(), extras_for(score::AccessPattern::small_files, 1e15)).count("direct"), 0u);
  // Streamed shards are scored by storage.read, and a file job is never told to map its data.
  const auto shards = probe_params_for(storage_dataset_like(), extras_for(score::AccessPattern::sequential_shards, 64 << 10));
  EXPECT_EQ(shards.count("direct"), 0u);
  EXPECT_EQ(probe_params_for(storage_dataset_like(), extras_for(score::AccessPattern::small_files, 64 << 10)).count("read"), 0u);
}

}  // namespace
}  // namespace nodeaudit::session
